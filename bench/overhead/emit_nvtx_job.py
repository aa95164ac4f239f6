# A small transformer trained from a DataLoader, each step an NVTX range
# "ProfilerStep#k" and, with EMIT=1, every operator a range of its own under
# torch.autograd.profiler.emit_nvtx(record_shapes=True) (hundreds of ranges a
# step, names of 60-300 bytes, each formatted anew), to price the recorder's
# NVTX path where PyTorch users meet it (issue 44).
#
#   python3 emit_nvtx_job.py            base: no ranges but the steps'
#   EMIT=1 python3 emit_nvtx_job.py     operators' ranges too
# under `gpucap record` or NVTX_INJECTION64_PATH as the caller chooses.
# Prints RESULT s=<seconds for STEPS steps after WARMUP> (a capture's range
# count says how many ranges a step made). With STEP_SYNC=1 every step ends
# in a synchronize and RESULT adds med=<the median step's seconds x STEPS>:
# a figure that one slow step (a DataLoader worker descheduled, another
# process on the machine) does not move, for differences of a few percent.
# With TOGGLE_BLOCKS=N (under `gpucap record`, recording from the start) the
# timed stretch is N blocks of BLOCK steps (default 5), the process sending
# itself SIGUSR2 between blocks, so that recorded and paused blocks
# alternate in one process: RESULT adds inc=<median over pairs of the
# recorded block's seconds minus the next paused block's, per step>, the
# recorder's increment free of the 10-20% that separate processes differ by.
import os
import time

import torch

steps, warmup = int(os.environ.get("STEPS", "30")), int(os.environ.get("WARMUP", "5"))
emit = os.environ.get("EMIT", "0") == "1"
torch.manual_seed(0)


class Tokens(torch.utils.data.Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        x = torch.randint(0, 1000, (64,), generator=g)
        return x, torch.roll(x, -1)


loader = iter(torch.utils.data.DataLoader(Tokens(), batch_size=16, num_workers=2, persistent_workers=True))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(1000, 128)
        layer = torch.nn.TransformerEncoderLayer(128, 4, 256, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(128, 1000)

    def forward(self, x):
        return self.head(self.enc(self.emb(x)))


model = Model().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def step(k):
    torch.cuda.nvtx.range_push(f"ProfilerStep#{k}")
    x, y = next(loader)
    x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()


step_sync = os.environ.get("STEP_SYNC", "0") == "1"
times = []


def run(first, count):
    for k in range(first, first + count):
        t = time.perf_counter()
        step(k)
        if step_sync:
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
    torch.cuda.synchronize()


ctx = torch.autograd.profiler.emit_nvtx(record_shapes=True) if emit else None
if ctx:
    ctx.__enter__()
run(0, warmup)
times.clear()
toggle_blocks, block = int(os.environ.get("TOGGLE_BLOCKS", "0")), int(os.environ.get("BLOCK", "5"))
blocks = []
t0 = time.perf_counter()
if toggle_blocks:
    import signal
    elapsed = 0.0
    k = warmup
    for b in range(toggle_blocks):
        if b:
            os.kill(os.getpid(), signal.SIGUSR2)
            time.sleep(0.2)  # the recorder switches on its control thread
        t = time.perf_counter()
        run(k, block)
        blocks.append(time.perf_counter() - t)
        elapsed += blocks[-1]
        k += block
    steps = toggle_blocks * block
else:
    run(warmup, steps)
    elapsed = time.perf_counter() - t0
if ctx:
    ctx.__exit__(None, None, None)
med = f" med={sorted(times)[len(times) // 2] * steps:.4f}" if times else ""
if blocks:
    # Block 0 recorded, 1 paused, 2 recorded, ...: each recorded block against the paused one after it.
    pairs = sorted((blocks[i] - blocks[i + 1]) / block for i in range(0, len(blocks) - 1, 2))
    med += f" inc={pairs[len(pairs) // 2]:.6f}"
print(f"RESULT s={elapsed:.4f}{med} steps={steps} emit={int(emit)}", flush=True)
