"""torch.compile(mode="reduce-overhead") training in steps named `train#N`.

Exercises (issue 38 item 3): Inductor's CUDA-graph trees. The compiled
forward and the compiled backward are each recorded once into a CUDA graph
during the warm-up steps and replayed in every compared step: the forward's
replay is launched by the main thread, the backward's by autograd's thread
(inside the main thread's `backward` range). The optimizer (AdamW, foreach)
stays eager. Each step begins with torch.compiler.cudagraph_mark_step_begin.

  python3 compile_reduce_overhead.py {gpucap|kineto} OUT_DIR
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from kineto_common import Program, deterministic, rng

WARMUP, STEPS = 3, 3
BATCH, DIM, HIDDEN, CLASSES = 64, 256, 1024, 16

prog = Program("compile_reduce_overhead", r"train#\d+")
deterministic()
dev = torch.device("cuda")

model = nn.Sequential(nn.Linear(DIM, HIDDEN), nn.GELU(), nn.LayerNorm(HIDDEN), nn.Linear(HIDDEN, HIDDEN), nn.GELU(),
                      nn.Linear(HIDDEN, CLASSES)).to(dev)
compiled = torch.compile(model, mode="reduce-overhead")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
x = torch.randn(BATCH, DIM, device=dev)
target = torch.randint(0, CLASSES, (BATCH,), device=dev)
hook = prog.autograd_hook()
prog.note_stream("default", torch.cuda.current_stream())


def train_step(name, warmup=False):
    with prog.step(name, warmup):
        torch.compiler.cudagraph_mark_step_begin()
        with rng("forward"):
            logits = compiled(x)
            loss = F.cross_entropy(logits, target)
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
        train_step(f"train#{i}")

prog.manifest["expect"] = {
    "ranges_per_step": ["forward", "backward", "optimizer"],
    "graph_replays_per_step": {"forward": "main thread", "backward": "autograd thread"},
    "backward_thread": "autograd",
    "compile_mode": "reduce-overhead (CUDA-graph trees)",
}
prog.write()
