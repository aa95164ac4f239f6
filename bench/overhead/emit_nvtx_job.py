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
# count says how many ranges a step made).
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


def run(first, count):
    for k in range(first, first + count):
        step(k)
    torch.cuda.synchronize()


ctx = torch.autograd.profiler.emit_nvtx(record_shapes=True) if emit else None
if ctx:
    ctx.__enter__()
run(0, warmup)
t0 = time.perf_counter()
run(warmup, steps)
elapsed = time.perf_counter() - t0
if ctx:
    ctx.__exit__(None, None, None)
print(f"RESULT s={elapsed:.4f} steps={steps} emit={int(emit)}", flush=True)
