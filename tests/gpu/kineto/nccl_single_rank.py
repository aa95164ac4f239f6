"""A single-rank NCCL job under torchrun: data-parallel training by hand.

Exercises (issue 38 item 3): one rank (`torchrun --standalone
--nproc_per_node=1`) with the NCCL backend trains an MLP in steps
`iteration#N`; each step averages its flattened gradients with an
all_reduce (AVG: on one rank an in-place SUM runs no kernel at all, AVG
still runs NCCL's reduce kernel) in range `allreduce_grads`, and gathers the
loss with all_gather_into_tensor in range `allgather_loss`. The collectives
run on ProcessGroupNCCL's own stream; NCCL adds NVTX ranges of its own
(domain NCCL, with payloads) that only gpucap sees, and c10d adds
record_function ranges (`nccl:all_reduce`, ...) that only Kineto sees.

  torchrun --standalone --nproc_per_node=1 nccl_single_rank.py {gpucap|kineto} OUT_DIR
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from kineto_common import Program, deterministic, rng

for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    assert os.environ.get(k) in ("0", "1"), f"{k} must be set (NVLink multicast stays off)"

WARMUP, STEPS = 2, 3
BATCH, DIM, CLASSES = 64, 512, 16

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
dev = torch.device("cuda", rank)
prog = Program("nccl_single_rank", r"iteration#\d+")
dist.init_process_group("nccl", device_id=dev)
deterministic(seed=rank)

model = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, CLASSES)).to(dev)
params = list(model.parameters())
opt = torch.optim.SGD(params, lr=0.1, foreach=True)
x = torch.randn(BATCH, DIM, device=dev)
target = torch.randint(0, CLASSES, (BATCH,), device=dev)
losses = torch.empty(world, device=dev)
hook = prog.autograd_hook()
prog.note_stream("default", torch.cuda.current_stream())


def train_step(name, warmup=False):
    with prog.step(name, warmup):
        with rng("forward"):
            loss = F.cross_entropy(model(x), target)
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.register_hook(hook)
            loss.backward()
        with rng("allreduce_grads"):
            flat = torch.cat([p.grad.reshape(-1) for p in params])
            dist.all_reduce(flat, op=dist.ReduceOp.AVG)
            offset = 0
            for p in params:
                p.grad.copy_(flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()
        with rng("allgather_loss"):
            dist.all_gather_into_tensor(losses, loss.detach().reshape(1))
        with rng("optimizer"):
            opt.step()


for i in range(WARMUP):
    train_step(f"warmup#{i}", warmup=True)
with prog.compared():
    for i in range(STEPS):
        train_step(f"iteration#{i}")
dist.barrier()
nccl = torch.cuda.nccl.version()
n_grad = sum(p.numel() for p in params)
prog.manifest["expect"] = {
    "ranges_per_step": ["forward", "backward", "allreduce_grads", "allgather_loss", "optimizer"],
    "rank": rank, "world_size": world,
    "nccl_version": ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl),
    "collectives_per_step": [
        {"op": "all_reduce", "reduction": "avg", "dtype": "float32", "nelems": n_grad, "bytes": n_grad * 4},
        {"op": "all_gather_into_tensor", "dtype": "float32", "nelems": world, "bytes": 4 * world},
    ],
    "backward_thread": "autograd",
}
dist.destroy_process_group()
if rank == 0:
    prog.write()
