# The yardstick's eager PyTorch step (yardstick/torch_work.py: the
# same 8-layer MLP, AdamW), timed in blocks so that one process gives both
# the wall time and the launching thread's CPU time per iteration: medians
# over BLOCKS blocks of PER iterations after WARMUP iterations.
#
# MARK=callgrind (instr.sh): under callgrind, instrumentation starts after the
# warm-up and each block's iterations are a region of the launching thread
# (callgrind_mark.h, loaded from CG_MARK_LIB), labelled "block step <b>".
#
# RANGES=warmup: the warm-up is one NVTX range `rec#0` (a capture range on
# `rec#\d+` records it, then pauses: the blocks are "paused after a recorded
# range"); RANGES=steps: every step is an NVTX range `step#N` (for --sample).
import ctypes, os, statistics as st, time, torch

blocks, per, warmup = (int(os.environ.get(k, d)) for k, d in (("BLOCKS", "8"), ("PER", "40"), ("WARMUP", "40")))
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.LayerNorm(256))
                          for _ in range(8)]).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
x = torch.randn(64, 256, device="cuda")


ranges = os.environ.get("RANGES", "")
n_step = 0


def step():
    global n_step
    if ranges == "steps":
        torch.cuda.nvtx.range_push(f"step#{n_step}")
    n_step += 1
    opt.zero_grad(set_to_none=True)
    m(x).square().mean().backward()
    opt.step()
    if ranges == "steps":
        torch.cuda.nvtx.range_pop()


if ranges == "warmup":
    torch.cuda.nvtx.range_push("rec#0")
for _ in range(warmup):
    step()
torch.cuda.synchronize()
if ranges == "warmup":
    torch.cuda.nvtx.range_pop()
    time.sleep(0.5)  # the recorder's control thread detaches (its 50 ms tick)
mark = ctypes.CDLL(os.environ["CG_MARK_LIB"]) if os.environ.get("MARK") else None
if mark and not mark.cg_mark_from_environment(b"price_step.py"):
    mark = None
wall, cpu = [], []
for b in range(blocks):
    torch.cuda.synchronize()
    t0, c0 = time.perf_counter(), time.thread_time()
    if mark:
        mark.cg_mark_dump(b"between blocks")
    for _ in range(per):
        step()
    if mark:
        mark.cg_mark_dump(f"block step on {b}".encode())
    torch.cuda.synchronize()
    wall.append((time.perf_counter() - t0) * 1e3 / per)
    cpu.append((time.thread_time() - c0) * 1e3 / per)
print(f"RESULT ms_per_iter={st.median(wall):.4f} cpu_ms_per_iter={st.median(cpu):.4f} "
      f"wall_min={min(wall):.4f} wall_max={max(wall):.4f}", flush=True)
