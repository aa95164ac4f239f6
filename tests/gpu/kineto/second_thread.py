"""A second Python thread launching on its own stream under its own ranges.

Exercises (issue 38 item 1's rule for threads without a step of their own):
the main thread trains an MLP eagerly in steps `train#N` (backward on
autograd's thread); at the start of each step it hands a job to a second
Python thread (`side-worker`), which, on its own CUDA stream and under its
own ranges `side#N` > `side_matmul`, runs a chain of matmuls and waits for
them. The main thread waits for the job before it ends its step, so the
second thread's launches always fall inside the main thread's `train#N`.
The second thread's kernels must carry only its own ranges (never the main
thread's `forward`/`backward`), and take `train#N` as their step.

In kineto mode the profiler runs with profile_all_threads=True, so that
record_function on a thread torch did not start is recorded too (the
profiler's callbacks are otherwise the profiling thread's and those it
hands its state to, such as autograd's).

  python3 second_thread.py {gpucap|kineto} OUT_DIR
"""
import queue
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F

from kineto_common import Program, deterministic, rng

WARMUP, STEPS = 1, 3
BATCH, DIM, CLASSES, SIDE_DIM, SIDE_MATMULS = 64, 512, 16, 768, 4

prog = Program("second_thread", r"train#\d+")
deterministic()
dev = torch.device("cuda", 0)

model = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, DIM), nn.GELU(), nn.Linear(DIM, CLASSES)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
x = torch.randn(BATCH, DIM, device=dev)
target = torch.randint(0, CLASSES, (BATCH,), device=dev)
side_a = torch.randn(SIDE_DIM, SIDE_DIM, device=dev)
side_stream = torch.cuda.Stream()
prog.note_stream("default", torch.cuda.current_stream())
prog.note_stream("second_thread", side_stream)
hook = prog.autograd_hook()

jobs, done = queue.Queue(), queue.Queue()


def side_worker():
    prog.note_thread("second-thread")
    torch.cuda.set_device(dev)
    while (job := jobs.get()) is not None:
        with torch.cuda.stream(side_stream), rng(job):
            with rng("side_matmul"):
                a = side_a
                for _ in range(SIDE_MATMULS):
                    a = torch.tanh(a @ side_a)
            side_stream.synchronize()
        done.put(job)


worker = threading.Thread(target=side_worker, name="side-worker")
worker.start()


def train_step(i, name, warmup=False):
    with prog.step(name, warmup):
        jobs.put(f"side_warmup#{i}" if warmup else f"side#{i}")
        with rng("forward"):
            loss = F.cross_entropy(model(x), target)
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.register_hook(hook)
            loss.backward()
        with rng("optimizer"):
            opt.step()
        with rng("join_side"):
            done.get(timeout=120)  # a failed second thread ends the run, not hangs it


def run():
    for i in range(WARMUP):
        train_step(i, f"warmup#{i}", warmup=True)
    with prog.compared(profile_all_threads=True):
        for i in range(STEPS):
            train_step(i, f"train#{i}")


try:
    run()
finally:
    jobs.put(None)
    worker.join()

prog.manifest["expect"] = {
    "ranges_per_step": ["forward", "backward", "optimizer", "join_side"],
    "second_thread": {"ranges_per_step": ["side#N", "side_matmul"], "stream": "second_thread",
                      "kernels_per_step": f"{SIDE_MATMULS} GEMMs ({SIDE_DIM}x{SIDE_DIM}) and {SIDE_MATMULS} tanh",
                      "launches_inside": "train#N of the main thread"},
    "backward_thread": "autograd",
}
prog.write()
