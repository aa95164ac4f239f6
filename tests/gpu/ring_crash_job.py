# The flight recorder's crash fixture (issue 46): a PyTorch job that trains
# eagerly in NVTX ranges step#0 .. step#N-1, then segfaults (a read of
# address 0 through ctypes) or aborts. Run under `gpucap record --ring-mb`;
# the crash handler's dump is the fixture, checked by check_ring_crash.py.
#
#   python3 ring_crash_job.py MANIFEST
#   STEPS=30 (steps before the crash), CRASH=segv|abort|none (none: the same
#   steps, then a clean exit: record_fixtures.sh's whole recording of them,
#   against which the dump's steps are held),
#   CRASH_DELAY_S=2.5: the pause between the last step and the crash. A
#   crash dump holds what had reached the recorder's writer, and the handler
#   cannot call CUPTI. GPU activity: CUPTI hands a buffer over only when it is
#   full or flushed (its own flush period returns full buffers only, so
#   before --ring-flush-ms a dump of this job held none), and in ring mode the
#   control thread forces a flush every GPUCAP_RING_FLUSH_MS (500 ms) at its
#   50 ms passes, the chunk going into the ring at once: ~0.55 s. Ranges:
#   collected at the control thread's 1 s tick, then batched by the writer
#   for up to 1 s (written sooner when an activity chunk follows, which a
#   job that only sleeps may not give): ~2.1 s at worst. The pause covers
#   that with ~0.4 s to spare, so the last steps are whole in the dump;
#   under ~2.1 s their ranges may be missing, under ~0.6 s their GPU work
#   too; 0 shows the loss.
import ctypes, json, os, sys, time, torch

manifest = sys.argv[1] if len(sys.argv) > 1 else "ring_crash.expect.json"
steps = int(os.environ.get("STEPS", "30"))
crash = os.environ.get("CRASH", "segv")
delay = float(os.environ.get("CRASH_DELAY_S", "2.5"))
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
               "trigger": {"segv": "crash: SIGSEGV", "abort": "crash: SIGABRT"}.get(crash, ""),
               "crash_delay_s": delay, "check_last": 5}, f, indent=1)
    f.flush()
    os.fsync(f.fileno())
if crash == "none":
    sys.exit(0)
time.sleep(delay)
if crash == "abort":
    os.abort()
ctypes.string_at(0)  # SIGSEGV
print("survived the crash", file=sys.stderr)
sys.exit(3)
