# A torch.compile job for the detach's acceptance (issue 40): a small
# GPT-style model trained with torch.compile (Inductor, Triton kernels) and
# then served with torch.compile(mode="reduce-overhead") (CUDA graphs), every
# step an NVTX range `step#N`, so that `--capture-range 'nvtx:step#\d+'
# --sample 10` records one step in ten and detaches CUPTI between them, with
# Inductor's compile workers, autograd's thread and CUDA-graph replays about.
# Prints RESULT with the final loss and the inference checksum.
#
#   python3 compile_job.py   (TRAIN, INFER: steps, default 100 each; INFER_MODE:
#   graphs (default, mode="reduce-overhead"), compile (Inductor, no graphs),
#   eager_graph (the eager model captured by torch.cuda.CUDAGraph), eager)
import os, time, torch
import torch.nn as nn
import torch.nn.functional as F

TRAIN, INFER = int(os.environ.get("TRAIN", "100")), int(os.environ.get("INFER", "100"))
VOCAB, DIM, HEADS, LAYERS, SEQ, BATCH = 4096, 256, 4, 4, 128, 16
torch.manual_seed(0)
dev = torch.device("cuda")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, HEADS, c // HEADS).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.pos = nn.Embedding(VOCAB, DIM), nn.Embedding(SEQ, DIM)
        self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, idx):
        x = self.emb(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        return self.head(self.blocks(x))


model = Gpt().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
train = torch.compile(model)
data = torch.randint(0, VOCAB, (BATCH, SEQ + 1), device=dev)
step = 0
t0 = time.perf_counter()
for _ in range(TRAIN):
    torch.cuda.nvtx.range_push(f"step#{step}")
    logits = train(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), data[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
    step += 1
torch.cuda.synchronize()
t_train = time.perf_counter() - t0

model.eval()
INFER_MODE = os.environ.get("INFER_MODE", "graphs")
if INFER_MODE == "graphs":
    serve = torch.compile(model, mode="reduce-overhead")
elif INFER_MODE == "compile":
    serve = torch.compile(model)
elif INFER_MODE == "eager_graph":
    static_in = data[:, :-1].clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):
        for _ in range(3):
            model(static_in)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_out = model(static_in)

    def serve(x):
        static_in.copy_(x)
        graph.replay()
        return static_out
else:
    serve = model
checksum = 0.0
t0 = time.perf_counter()
with torch.no_grad():
    for _ in range(INFER):
        torch.cuda.nvtx.range_push(f"step#{step}")
        if INFER_MODE == "graphs":
            torch.compiler.cudagraph_mark_step_begin()
        out = serve(data[:, :-1])
        try:
            checksum += float(out[:, -1].float().mean())
        except Exception:
            # Which step saw the fault (the capture's recording intervals say
            # which steps were recorded): the first synchronizing call after it.
            print(f"FAILED at step#{step} (inference step {step - TRAIN})", flush=True)
            raise
        torch.cuda.nvtx.range_pop()
        step += 1
torch.cuda.synchronize()
t_infer = time.perf_counter() - t0
print(f"RESULT loss={loss.item():.4f} checksum={checksum:.4f} train_s={t_train:.2f} infer_s={t_infer:.2f}",
      flush=True)
