# The yardstick's eager PyTorch step (yardstick/torch_work.py: the
# same 8-layer MLP, AdamW), every step in an NVTX range `step#N`, for
# --capture-range nvtx / --sample: WARMUP steps, then BLOCKS blocks of PER
# steps timed (wall and the launching thread's CPU time, medians of blocks).
# seg_ms: the median host time of one step (no synchronisation inside it)
# in each stretch between the steps --sample SAMPLE records (step#N with
# N % SAMPLE == SAMPLE - 1, left out): the same process's paused steps
# before its first sample against those after, a comparison within one
# process that the across-process noise does not reach.
import os, statistics as st, time, torch

blocks, per, warmup = (int(os.environ.get(k, d)) for k, d in (("BLOCKS", "20"), ("PER", "100"), ("WARMUP", "40")))
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.LayerNorm(256))
                          for _ in range(8)]).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
x = torch.randn(64, 256, device="cuda")
n = 0


sample = int(os.environ.get("SAMPLE", "100"))
host_ms = {}


def step():
    global n
    t0 = time.perf_counter()
    torch.cuda.nvtx.range_push(f"step#{n}")
    opt.zero_grad(set_to_none=True)
    m(x).square().mean().backward()
    opt.step()
    torch.cuda.nvtx.range_pop()
    host_ms[n] = (time.perf_counter() - t0) * 1e3
    n += 1


for _ in range(warmup):
    step()
torch.cuda.synchronize()
wall, cpu = [], []
for _ in range(blocks):
    torch.cuda.synchronize()
    t0, c0 = time.perf_counter(), time.thread_time()
    for _ in range(per):
        step()
    torch.cuda.synchronize()
    wall.append((time.perf_counter() - t0) * 1e3 / per)
    cpu.append((time.thread_time() - c0) * 1e3 / per)
segments = [[]]
for i in range(warmup, n):
    if i % sample == sample - 1:
        segments.append([])
    else:
        segments[-1].append(host_ms[i])
seg = ",".join(f"{st.median(v):.4f}" for v in segments if v)
print(f"RESULT steps={n} ms_per_iter={st.median(wall):.4f} cpu_ms_per_iter={st.median(cpu):.4f} "
      f"wall_mean={st.mean(wall):.4f} cpu_mean={st.mean(cpu):.4f} seg_ms={seg}", flush=True)
