# Two ranks under torchrun: NCCL all-reduces through torch.distributed inside
# NVTX step ranges, plus (rank 0) a tensor copied to the other GPU with
# tensor.to('cuda:1'). Each rank writes its manifest.
#   torchrun --standalone --nproc_per_node=2 torch_allreduce.py OUT_DIR
import json, os, sys, torch, torch.distributed as dist

for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    assert os.environ.get(k) in ("0", "1"), f"{k} must be set (NVLink multicast stays off)"
out = sys.argv[1] if len(sys.argv) > 1 else "."
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(rank)
dist.init_process_group("nccl")
x = torch.full((1 << 20,), float(rank + 1), device="cuda")
steps = 4
for step in range(steps):
    with torch.cuda.nvtx.range(f"ProfilerStep#{step}"):
        x.mul_(1.0)
        dist.all_reduce(x)
torch.cuda.synchronize()
expected = sum(range(1, world + 1)) * (world ** (steps - 1))
assert abs(x[0].item() - expected) < 1e-3, (x[0].item(), expected)
peer_bytes = 0
if rank == 0 and torch.cuda.device_count() > 1:
    y = torch.ones(1 << 20, device="cuda:0")
    z = y.to("cuda:1")
    torch.cuda.synchronize(1)
    peer_bytes = y.numel() * y.element_size()
dist.barrier()
dist.destroy_process_group()
json.dump({"rank": rank, "world_size": world, "all_reduces": steps, "elements": x.numel(),
           "steps": list(range(steps)), "peer_copy_bytes": peer_bytes},
          open(os.path.join(out, f"allreduce-{rank}.expect.json"), "w"))
print(f"rank {rank}: done")
