"""torch.compile training in steps named `step N`, then compiled inference in `infer N`.

Exercises (issue 38 item 1, the GPT-2 reproduction in small): a model built
from code (a two-block pre-norm transformer over token ids, no download)
compiled with torch.compile (Inductor, default mode: Triton kernels, no
CUDA graphs), trained with AdamW (foreach, eager). The compiled backward
runs on autograd's thread, so most of each step's kernels are launched by a
thread with no `step N` range of its own. Inference steps run the same
compiled model under torch.no_grad (a second compiled graph).

Compilation happens in the warm-up steps (`warmup N`, `warmup_infer N`),
outside the compared ones and outside the profiler.

  python3 compile_train.py {gpucap|kineto} OUT_DIR
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from kineto_common import Program, deterministic, rng

WARMUP, STEPS, INFER_STEPS = 2, 3, 2
BATCH, SEQ, VOCAB, DIM, HEADS, LAYERS = 8, 64, 512, 128, 4, 2

prog = Program("compile_train", r"(step|infer) \d+")
deterministic()
dev = torch.device("cuda")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.proj = nn.Linear(DIM, DIM)
        self.fc, self.out = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.zeros(SEQ, DIM))
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.ln = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)

    def forward(self, ids):
        return self.head(self.ln(self.blocks(self.tok(ids) + self.pos)))


model = TinyLM().to(dev)
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
ids = torch.randint(0, VOCAB, (BATCH, SEQ), device=dev)
labels = torch.roll(ids, -1, dims=1)
hook = prog.autograd_hook()
prog.note_stream("default", torch.cuda.current_stream())


def train_step(name, warmup=False):
    with prog.step(name, warmup):
        with rng("forward"):
            logits = compiled(ids)
            loss = F.cross_entropy(logits.view(-1, VOCAB), labels.view(-1))
        logits.register_hook(hook)
        with rng("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with rng("optimizer"):
            opt.step()


def infer_step(name, warmup=False):
    with prog.step(name, warmup), torch.no_grad():
        with rng("forward"):
            compiled(ids).argmax(-1)


for i in range(WARMUP):
    train_step(f"warmup {i}", warmup=True)
infer_step("warmup_infer 0", warmup=True)
with prog.compared():
    for i in range(STEPS):
        train_step(f"step {i}")
    for i in range(INFER_STEPS):
        infer_step(f"infer {i}")

prog.manifest["expect"] = {
    "ranges_per_train_step": ["forward", "backward", "optimizer"],
    "ranges_per_infer_step": ["forward"],
    "backward_thread": "autograd",
    "compile_mode": "default (Inductor, no CUDA graphs)",
    "optimizer": "AdamW foreach (eager)",
}
prog.write()
