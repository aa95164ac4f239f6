"""Eager training whose steps are named `train#N`, with eager CUDA events.

Exercises (issue 38 items 1, 3 and 5):
  * steps named by the user, not ProfilerStep: a step rule keyed on
    `ProfilerStep#N` finds none here;
  * the backward pass on autograd's device thread (`pt_autograd_0`): its
    kernels are launched by a thread with no range of its own, inside the
    main thread's `train#N` and `backward` ranges;
  * bf16 autocast and a fused AdamW (one multi-tensor kernel per step);
  * eager CUDA events (torch.cuda.Event.record): `start`/`end` timing events
    around each step and a `grads_ready` event that a side stream waits on
    before it computes the loss metric. Recorded with
    `gpucap record --kinds default,cuda_event`; in kineto mode the profiler's
    enable_cuda_sync_events is on, so Kineto writes its cuda_event and
    cuda_sync activities, for comparison with gpucap's CUDA_EVENT records.

  python3 eager_train.py {gpucap|kineto} OUT_DIR
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from kineto_common import Program, deterministic, rng

WARMUP, STEPS = 2, 3
BATCH, DIM, HIDDEN, CLASSES, LAYERS = 64, 256, 1024, 16, 3

prog = Program("eager_train", r"train#\d+")
deterministic()
dev = torch.device("cuda")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM)
        self.up = nn.Linear(DIM, HIDDEN)
        self.down = nn.Linear(HIDDEN, DIM)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


model = nn.Sequential(*[Block() for _ in range(LAYERS)], nn.LayerNorm(DIM), nn.Linear(DIM, CLASSES)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
x = torch.randn(BATCH, DIM, device=dev)
target = torch.randint(0, CLASSES, (BATCH,), device=dev)
side = torch.cuda.Stream()
prog.note_stream("default", torch.cuda.current_stream())
prog.note_stream("side_metric", side)
hook = prog.autograd_hook()
timings = []


def train_step(name, warmup=False):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    grads_ready = torch.cuda.Event()
    with prog.step(name, warmup):
        start.record()
        with rng("forward"):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            loss = F.cross_entropy(logits.float(), target)
        logits.register_hook(hook)  # notes the thread that runs backward
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        grads_ready.record()
        with rng("metric"):
            side.wait_event(grads_ready)
            with torch.cuda.stream(side):
                metric = loss.detach() * 1.0
            loss.record_stream(side)  # read on the side stream
        with rng("optimizer"):
            opt.step()
        end.record()
    timings.append((start, end))


for i in range(WARMUP):
    train_step(f"warmup#{i}", warmup=True)
with prog.compared(enable_cuda_sync_events=True):
    for i in range(STEPS):
        train_step(f"train#{i}")
torch.cuda.synchronize()
elapsed = [s.elapsed_time(e) for s, e in timings]  # the events were real timing events

prog.manifest["expect"] = {
    "ranges_per_step": ["forward", "backward", "metric", "optimizer"],
    "backward_thread": "autograd",
    "event_records_per_step": {"count": 3, "events": ["start (timing)", "grads_ready (default stream)", "end (timing)"],
                               "stream": "default"},
    "stream_waits_per_step": {"count": 1, "stream": "side_metric", "on": "grads_ready"},
    "side_stream_kernels_per_step": 1,
    "fused_adamw": True,
    "autocast": "bfloat16",
    "events_timed": len(elapsed),
}
prog.manifest["notes"].append("kineto mode uses enable_cuda_sync_events=True so Kineto writes cuda_event/cuda_sync activities")
prog.write()
