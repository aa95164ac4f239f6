# A PyTorch eager training loop in NVTX ranges step#N, for the flight
# recorder's step triggers (issue 46), under
#   gpucap record --ring ... --window-nvtx 'step#\d+' --ring-hang T | --ring-slow-step K
#
#   torch_steps.py slow MANIFEST   step SLOW_STEP (40) also sleeps on the GPU
#                                  (torch.cuda._sleep) for SLOW_FACTOR (10) times
#                                  the median step of the steps before it
#   torch_steps.py hang MANIFEST   step HANG_STEP (20) launches a kernel that spins
#                                  on a flag in pinned host memory, and the main
#                                  thread waits in torch.cuda.synchronize(); a
#                                  watcher thread releases the flag once a dump
#                                  whose trigger is a hang exists (or after
#                                  RELEASE_AFTER_S, 120 s: the check then fails);
#                                  HANG_TRIGGER=call: a blocked call's dump
#                                  (--ring-hang-call) instead of a step hang's
#
# Each mode runs STEPS (60) steps and waits, stepping on (slow) or blocked
# (hang), for the dump it provokes: the dump is seen by the job while it
# runs. The dumps' names come from GPUCAP_OUTPUT, which `gpucap record` sets.
# The manifest says what the job did and saw; check_ring_steps.py checks
# the dumps against it.
import ctypes, glob, json, os, statistics, sys, threading, time

import torch

mode, manifest_path = sys.argv[1], sys.argv[2]
steps = int(os.environ.get("STEPS", "60"))
output = os.environ.get("GPUCAP_OUTPUT", "")
stem = output[: output.rfind(".")] if "." in os.path.basename(output) else output


def dump_saying(text):
    """The path of a flight-recorder dump of this job whose bytes hold text."""
    for path in sorted(glob.glob(glob.escape(stem) + ".ring-*.gpucap")):
        try:
            with open(path, "rb") as f:
                if text in f.read():
                    return path
        except OSError:
            pass
    return None


torch.manual_seed(0)
m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.GELU(), torch.nn.LayerNorm(1024))
                          for _ in range(6)]).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
x = torch.randn(512, 1024, device="cuda")


def train_step():
    opt.zero_grad(set_to_none=True)
    loss = m(x).square().mean()
    loss.backward()
    opt.step()
    return loss.item()  # the step ends when its GPU work has


for _ in range(3):  # warm-up outside any step range
    train_step()
torch.cuda.synchronize()
manifest = {"mode": mode, "steps": steps, "pid": os.getpid(), "output": output}
durations = []


def step(n, extra=None):
    t = time.perf_counter()
    torch.cuda.nvtx.range_push(f"step#{n}")
    if extra:
        extra()
    train_step()
    torch.cuda.nvtx.range_pop()
    durations.append(time.perf_counter() - t)


if mode == "slow":
    slow = int(os.environ.get("SLOW_STEP", "40"))
    factor = float(os.environ.get("SLOW_FACTOR", "10"))
    # The GPU's sleep cycles per second, measured.
    torch.cuda._sleep(1000)
    torch.cuda.synchronize()
    t = time.perf_counter()
    torch.cuda._sleep(50_000_000)
    torch.cuda.synchronize()
    cycles_per_s = 50_000_000 / (time.perf_counter() - t)
    n = 0
    while n < steps:
        if n == slow:
            median = statistics.median(durations[-20:])
            sleep_s = factor * median
            manifest.update(slow_step=slow, median_step_ms=median * 1e3, slow_sleep_ms=sleep_s * 1e3)
            step(n, lambda: torch.cuda._sleep(int(sleep_s * cycles_per_s)))
            manifest["slow_step_ms"] = durations[-1] * 1e3
        else:
            step(n)
        n += 1
    # Step on until the slow step's dump exists (it waits a second after the step).
    waited_from = time.time()
    while not (seen := dump_saying(b"slow step: step#%d took" % slow)) and time.time() - waited_from < 60:
        step(n)
        n += 1
    manifest.update(dump_seen=seen, steps_run=n, durations_ms=[round(d * 1e3, 3) for d in durations])
elif mode == "hang":
    hang = int(os.environ.get("HANG_STEP", "20"))
    release_after = float(os.environ.get("RELEASE_AFTER_S", "120"))
    # The dump that releases the kernel: a step hang's (--ring-hang), or with
    # HANG_TRIGGER=call a blocked call's (--ring-hang-call).
    # (One thread's or several threads' form: "a CUDA call" / "CUDA calls".)
    trigger = b" in flight for " if os.environ.get("HANG_TRIGGER") == "call" \
        else b"hang: no step closed for"
    cuda = ctypes.CDLL("libcuda.so.1")
    vp, u = ctypes.c_void_p, ctypes.c_uint
    cuda.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, ctypes.POINTER(vp), vp]
    cuda.cuMemHostGetDevicePointer_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), vp, u]

    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: CUresult {rc}")

    # A kernel that spins until the word at `flag` is not 0 (PTX, JIT-compiled
    # by the driver: no compiler needed on the machine).
    ptx = b"""
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin_until_released(.param .u64 flag)
{
  .reg .pred %p;
  .reg .b32 %r;
  .reg .b64 %rd;
  ld.param.u64 %rd, [flag];
WAIT:
  nanosleep.u32 1000;
  ld.volatile.u32 %r, [%rd];
  setp.eq.u32 %p, %r, 0;
  @%p bra WAIT;
  ret;
}
"""
    module, fn = ctypes.c_void_p(), ctypes.c_void_p()
    check(cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(ptx)), "cuModuleLoadData")
    check(cuda.cuModuleGetFunction(ctypes.byref(fn), module, b"spin_until_released"), "cuModuleGetFunction")
    flag = torch.zeros(1, dtype=torch.int32, pin_memory=True)
    device_flag = ctypes.c_uint64()
    check(cuda.cuMemHostGetDevicePointer_v2(ctypes.byref(device_flag), flag.data_ptr(), 0),
          "cuMemHostGetDevicePointer")
    released = {}

    def watcher():
        started = time.time()
        while time.time() - started < release_after:
            seen = dump_saying(trigger)
            if seen:
                released.update(by="dump", dump_seen=seen, seen_after_s=time.time() - started)
                break
            time.sleep(0.05)
        else:
            released.update(by="timeout", seen_after_s=None)
        ctypes.c_int32.from_address(flag.data_ptr()).value = 1  # the spinning kernel ends

    for n in range(steps):
        if n != hang:
            step(n)
            continue
        t = time.perf_counter()
        torch.cuda.nvtx.range_push(f"step#{n}")
        train_step()
        params = (ctypes.c_void_p * 1)(ctypes.addressof(device_flag))
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        check(cuda.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, None), "cuLaunchKernel")
        w = threading.Thread(target=watcher)
        w.start()
        blocked_at = time.time()
        torch.cuda.synchronize()  # blocked until the watcher releases the kernel
        manifest["blocked_s"] = time.time() - blocked_at
        w.join()
        torch.cuda.nvtx.range_pop()
        durations.append(time.perf_counter() - t)
    manifest.update(hang_step=hang, last_step_before_hang=hang - 1, released_by=released.get("by"),
                    hang_trigger=trigger.decode(),
                    dump_seen=released.get("dump_seen"), dump_seen_after_s=released.get("seen_after_s"),
                    steps_run=steps)
else:
    sys.exit(f"torch_steps.py: mode slow or hang, not {mode}")

torch.cuda.synchronize()
manifest["step_pattern"] = "step#\\d+"
json.dump(manifest, open(manifest_path, "w"), indent=1)
print(f"torch_steps {mode}: done")
