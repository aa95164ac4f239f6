"""A DataLoader with worker processes and pinned memory feeding a side copy stream.

Exercises (issue 38 item 3): batches come from a DataLoader with 2 worker
processes and pin_memory=True (its pin-memory thread copies each batch into
page-locked memory); each compared step `batch#N` copies its batch to the GPU
with non_blocking copies on a dedicated copy stream (range `h2d`), makes the
default stream wait for it, and trains a small conv net eagerly (backward on
autograd's thread). The workers start no CUDA; the pin-memory thread makes
host allocations but launches nothing.

The data are made from the sample index alone (a generator seeded with it),
shuffle is off, so every run sees the same batches.

  python3 dataloader_side_stream.py {gpucap|kineto} OUT_DIR
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from kineto_common import Program, deterministic, rng

WARMUP, STEPS = 2, 3
BATCH, WORKERS, CLASSES = 16, 2, 10
SHAPE = (3, 32, 32)


class Synthetic(Dataset):
    def __len__(self):
        return BATCH * (WARMUP + STEPS)

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(SHAPE, generator=g), i % CLASSES


prog = Program("dataloader_side_stream", r"batch#\d+")
deterministic()
dev = torch.device("cuda")

model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(64, CLASSES)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=True)
copy_stream = torch.cuda.Stream()
prog.note_stream("default", torch.cuda.current_stream())
prog.note_stream("h2d_copy", copy_stream)
hook = prog.autograd_hook()

loader = DataLoader(Synthetic(), batch_size=BATCH, shuffle=False, num_workers=WORKERS, pin_memory=True,
                    prefetch_factor=2, persistent_workers=False)
batches = iter(loader)
for w in getattr(batches, "_workers", []):
    prog.note_other_thread("dataloader_worker_process", w.pid, w.name)
pin = getattr(batches, "_pin_memory_thread", None)
if pin is not None:
    prog.note_other_thread("pin_memory", pin.native_id, pin.name)


def train_step(name, warmup=False):
    xb, yb = next(batches)
    assert xb.is_pinned() and yb.is_pinned()
    with prog.step(name, warmup):
        with rng("h2d"):
            with torch.cuda.stream(copy_stream):
                x = xb.to(dev, non_blocking=True)
                y = yb.to(dev, non_blocking=True)
            torch.cuda.current_stream().wait_stream(copy_stream)
            x.record_stream(torch.cuda.current_stream())
            y.record_stream(torch.cuda.current_stream())
        with rng("forward"):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        logits.register_hook(hook)
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with rng("optimizer"):
            opt.step()


for i in range(WARMUP):
    train_step(f"warmup#{i}", warmup=True)
with prog.compared():
    for i in range(STEPS):
        train_step(f"batch#{i}")
del batches

prog.manifest["expect"] = {
    "ranges_per_step": ["h2d", "forward", "backward", "optimizer"],
    "h2d_copies_per_step": [
        {"bytes": BATCH * SHAPE[0] * SHAPE[1] * SHAPE[2] * 4, "kind": "HtoD", "src": "pinned", "stream": "h2d_copy",
         "what": "images float32"},
        {"bytes": BATCH * 8, "kind": "HtoD", "src": "pinned", "stream": "h2d_copy", "what": "labels int64"},
    ],
    "backward_thread": "autograd",
    "dataloader": {"num_workers": WORKERS, "pin_memory": True, "batch_size": BATCH},
}
prog.write()
