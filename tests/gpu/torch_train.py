# A PyTorch job as users run it: eager training steps inside NVTX ranges
# named ProfilerStep#N (as torch.profiler names steps), one step under
# torch.autograd.profiler.emit_nvtx, then the forward pass captured in a CUDA
# graph and replayed inside later ProfilerStep ranges. Writes a manifest of
# what it did.
import json, os, sys, torch

out = sys.argv[1] if len(sys.argv) > 1 else "torch_train.expect.json"
eager_steps = int(os.environ.get("EAGER_STEPS", "4"))
graph_steps = int(os.environ.get("GRAPH_STEPS", "3"))
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.LayerNorm(256)) for _ in range(4)]).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
x = torch.randn(64, 256, device="cuda")

def step():
    opt.zero_grad(set_to_none=True)
    y = m(x).square().mean()
    y.backward()
    opt.step()

for _ in range(2):  # warm-up outside any step range
    step()
torch.cuda.synchronize()

for i in range(eager_steps):
    with torch.cuda.nvtx.range(f"ProfilerStep#{i}"):
        step()
torch.cuda.synchronize()
with torch.cuda.nvtx.range(f"ProfilerStep#{eager_steps}"):
    with torch.autograd.profiler.emit_nvtx():
        step()
torch.cuda.synchronize()

s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(2):
        y = m(x)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.nvtx.range("graph_capture"):
    with torch.cuda.graph(g):
        with torch.cuda.nvtx.range("captured_forward"):
            y = m(x)
first_graph_step = eager_steps + 1
for i in range(graph_steps):
    with torch.cuda.nvtx.range(f"ProfilerStep#{first_graph_step + i}"):
        g.replay()
torch.cuda.synchronize()

json.dump({
    "eager_steps": list(range(eager_steps + 1)),
    "emit_nvtx_step": eager_steps,
    "graph_steps": list(range(first_graph_step, first_graph_step + graph_steps)),
    "graph_capture_ranges": ["graph_capture", "captured_forward"],
    "step_range_pattern": "ProfilerStep#\\d+",
}, open(out, "w"), indent=1)
print("torch_train: done")
