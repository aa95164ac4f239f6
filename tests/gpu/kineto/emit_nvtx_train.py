"""A small transformer trained from a DataLoader, its operators marked by emit_nvtx.

The pair for issue 39 (PyTorch's operators from emit_nvtx ranges): the
gpucap run's compared steps run under
torch.autograd.profiler.emit_nvtx(record_shapes=True), the Kineto run's under
torch.profiler with record_shapes=True, so that the operator names, counts,
sequence numbers, input shapes and kernel -> operator links of the two
traces can be compared step by step.

Exercises:
  * every aten op, autograd node and `autograd::engine::evaluate_function`
    of a forward and backward pass (attention, layer norm, GELU MLP, cross
    entropy), the backward pass on autograd's device thread;
  * PyTorch's own user scopes, which emit_nvtx suffixes like operators:
    `Optimizer.step#AdamW.step`, `enumerate(DataLoader)#...`;
  * a DataLoader with two workers and pinned memory, batches copied with
    non_blocking=True.

  python3 emit_nvtx_train.py {gpucap|kineto} OUT_DIR
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

from kineto_common import Program, deterministic, rng

WARMUP, STEPS = 2, 3
BATCH, SEQ, DIM, HEADS, LAYERS, VOCAB = 16, 64, 256, 4, 2, 512

prog = Program("emit_nvtx_train", r"train#\d+")
deterministic()
dev = torch.device("cuda")

model = nn.Sequential(
    nn.Embedding(VOCAB, DIM),
    nn.TransformerEncoder(nn.TransformerEncoderLayer(DIM, HEADS, 4 * DIM, dropout=0.0, batch_first=True,
                                                     activation="gelu"), LAYERS),
    nn.LayerNorm(DIM),
    nn.Linear(DIM, VOCAB),
).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(0)
tokens = torch.randint(0, VOCAB, ((WARMUP + STEPS) * BATCH, SEQ + 1), generator=g)
loader = DataLoader(TensorDataset(tokens), batch_size=BATCH, num_workers=2, pin_memory=True)
prog.note_stream("default", torch.cuda.current_stream())
hook = prog.autograd_hook()


def train_step(name, batch, warmup=False):
    with prog.step(name, warmup):
        with rng("h2d"):
            batch = batch.to(dev, non_blocking=True)
        with rng("forward"):
            logits = model(batch[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        logits.register_hook(hook)
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with rng("optimizer"):
            opt.step()


batches = iter(loader)
for i in range(WARMUP):
    train_step(f"warmup#{i}", next(batches)[0], warmup=True)
with prog.compared(record_shapes=True, emit_nvtx=not prog.kineto):
    for i in range(STEPS):
        train_step(f"train#{i}", next(batches)[0])
torch.cuda.synchronize()

prog.manifest["expect"] = {
    "ranges_per_step": ["h2d", "forward", "backward", "optimizer"],
    "backward_thread": "autograd",
    "operators": "gpucap: emit_nvtx(record_shapes=True) ranges; kineto: cpu_op with record_shapes=True",
}
prog.write()
