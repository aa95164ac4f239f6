# The flight recorder's crash fixture (issue 46): a PyTorch job that trains
# eagerly in NVTX ranges step#0 .. step#N-1, then segfaults (a read of
# address 0 through ctypes) or aborts. Run under `gpucap record --ring-mb`;
# the crash handler's dump is the fixture, checked by check_ring_crash.py.
#
#   python3 ring_crash_job.py MANIFEST
#   STEPS=30 (steps before the crash), CRASH=segv|abort,
#   CRASH_DELAY_S=3: the pause between the last step and the crash. A crash
#   dump holds what had reached the recorder's writer: CUPTI hands its
#   buffers over at its flush period (GPUCAP_FLUSH_MS, 1 s) and the writer
#   batches ranges for up to 1 s, so the last ~2 s before a crash are not in
#   it. The pause keeps the last steps inside the dump; 0 shows the loss.
import ctypes, json, os, sys, time, torch

manifest = sys.argv[1] if len(sys.argv) > 1 else "ring_crash.expect.json"
steps = int(os.environ.get("STEPS", "30"))
crash = os.environ.get("CRASH", "segv")
delay = float(os.environ.get("CRASH_DELAY_S", "3"))
torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.LayerNorm(256)) for _ in range(4)]).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
x = torch.randn(64, 256, device="cuda")


def step():
    opt.zero_grad(set_to_none=True)
    y = m(x).square().mean()
    y.backward()
    opt.step()


for _ in range(2):  # warm-up outside any step range: lazy inits launch kernels of their own
    step()
torch.cuda.synchronize()
for i in range(steps):
    with torch.cuda.nvtx.range(f"step#{i}"):
        step()
    torch.cuda.synchronize()
with open(manifest, "w") as f:
    json.dump({"steps": steps, "step_pattern": "step#(\\d+)", "crash": crash,
               "trigger": "crash: SIGSEGV" if crash == "segv" else "crash: SIGABRT",
               "crash_delay_s": delay, "check_last": 5}, f, indent=1)
    f.flush()
    os.fsync(f.fileno())
time.sleep(delay)
if crash == "abort":
    os.abort()
ctypes.string_at(0)  # SIGSEGV
print("survived the crash", file=sys.stderr)
sys.exit(3)
