#!/usr/bin/env python3
"""The recorder's price on PyTorch, many short rounds: torch is imported once,
then every run is a fork of this process that sets its variant's environment
(CUDA_INJECTION64_PATH and the rest, read when CUDA initialises in the child),
pins its launching thread, and times the workload in blocks with a CPU
calibration block before each. Saves the ~5 s of import per run that made
price.sh's step rounds too few to resolve a point.

    price_fork.py SPEC ROUNDS WORKLOAD

SPEC: one variant a line, `name VAR=value ...` (`-VAR` unsets VAR), written by
price.sh. WORKLOAD: step (the yardstick's eager MLP step) or graph (its
forward captured into a CUDA graph and replayed). Environment: BLOCKS, PER,
WARMUP, PIN_CPU (the launching thread's CPU; -1 none), CALIB_N, TOGGLE
(signal|label: blocks alternate recording/paused, see launch_loop.cu),
TOGGLE_EVERY, TOGGLE_ORDER (abba: on, off, off, on, ... as in launch_loop.cu),
RUN_TIMEOUT, DEADLINE. Prints RUN lines in price.sh's format.

Each block also reads the launching thread's counters (thread_counters.py:
instructions retired and cycles where the machine has a PMU, context
switches) up to the end of the block's launches (before the closing
synchronize, whose spinning depends on how far the GPU lags) and the
process's CPU time (every thread: the recorder's too): inst_per_iter,
cyc_per_iter, csw (per block), pcpu_us_per_iter.

And every iteration is timed on its own (the launching thread's wall time
from one iteration's start to the next; the step never waits for the GPU):
it_p10_us, it_p25_us, it_min_us, it_med_us are quantiles over all of a
run's iterations (onoff_p10, onoff_p25 per state in-process): the vCPU's
speed only drops below its best, so the fast iterations say more about the
code than a block's mean. CALIB_N=0 skips the calibration blocks.
"""
import os
import select
import signal
import statistics as st
import sys
import time

import torch  # imported once, before any fork; CUDA is not initialised here

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import thread_counters  # noqa: E402


def pin(cpu):
    if cpu < 0:
        return
    allowed = os.sched_getaffinity(0)
    rest = allowed - {cpu}
    me = __import__("threading").get_native_id()
    os.sched_setaffinity(0, {cpu})
    for tid in os.listdir("/proc/self/task"):
        if int(tid) != me and rest:
            try:
                os.sched_setaffinity(int(tid), rest)
            except OSError:
                pass


def calibrate(n):
    # Interpreter work of the kind the eager step does on its thread.
    if n <= 0:
        return 1.0
    t0 = time.thread_time()
    acc, d = 0, {}
    for i in range(n):
        d[i & 255] = acc
        acc = (acc + d.get((i * 7) & 255, i)) & 0xFFFFFFFF
    return (time.thread_time() - t0) * 1e6 / n


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    i = int(pos)
    return v[i] + (pos - i) * (v[i + 1] - v[i]) if i + 1 < len(v) else v[i]


def child(workload):
    blocks, per, warmup = (int(os.environ.get(k, d)) for k, d in (("BLOCKS", "10"), ("PER", "30"), ("WARMUP", "30")))
    cal_n = int(os.environ.get("CALIB_N", "200000"))
    toggle = os.environ.get("TOGGLE", "")
    t_start = time.perf_counter()
    torch.manual_seed(0)
    m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.LayerNorm(256))
                              for _ in range(8)]).cuda()
    x = torch.randn(64, 256, device="cuda")
    if workload == "step":
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3)

        def it():
            opt.zero_grad(set_to_none=True)
            m(x).square().mean().backward()
            opt.step()
    else:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                m(x)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            m(x)
        it = g.replay
        per *= 20
    t_model = time.perf_counter()
    for _ in range(warmup):
        it()
    torch.cuda.synchronize()
    t_warm = time.perf_counter()
    pin(int(os.environ.get("PIN_CPU", "-1")))
    calibrate(cal_n // 4)
    tc = thread_counters.Counters()
    print("counters " + " ".join(f"{k}={v!r}" for k, v in tc.status().items()), flush=True)
    on = True
    rows = {True: [], False: []}
    iters = {True: [], False: []}
    iters_cpu = {True: [], False: []}
    toggle_every = max(1, int(os.environ.get("TOGGLE_EVERY", "1")))
    abba = os.environ.get("TOGGLE_ORDER") == "abba"
    for b in range(blocks):
        seg = b // toggle_every
        want = seg % 4 in (0, 3) if abba else seg % 2 == 0
        if toggle and want != on:
            if toggle == "signal":
                os.kill(os.getpid(), signal.SIGUSR2)
            on = want
            time.sleep(0.15)
        c = calibrate(cal_n)
        torch.cuda.synchronize()
        k0 = tc.read()
        p0, t0, c0 = time.process_time(), time.perf_counter(), time.thread_time()
        its, itc = iters[on], iters_cpu[on]
        t_prev, c_prev = t0, c0
        for _ in range(per):
            it()
            t_now, c_now = time.perf_counter(), time.thread_time()
            its.append((t_now - t_prev) * 1e6)
            itc.append((c_now - c_prev) * 1e6)
            t_prev, c_prev = t_now, c_now
        k = tc.delta(k0)
        torch.cuda.synchronize()
        w, cp, pc = ((x() - x0) * 1e6 / per for x, x0 in
                     ((time.perf_counter, t0), (time.thread_time, c0), (time.process_time, p0)))
        per_it = lambda n: k[n] / per if k[n] is not None else float("nan")
        rows[on].append((w, cp, w / c, cp / c, per_it("instructions"), per_it("cycles"),
                         float(k["context_switches"] if k["context_switches"] is not None else "nan"), pc))
    allr = rows[True] + rows[False]
    med = lambda rs, i: st.median(r[i] for r in rs)
    out = (f"us_per_iter={med(allr, 0):.3f} cpu_us_per_iter={med(allr, 1):.3f} "
           f"cal={med(allr, 2):.4f} cpu_cal={med(allr, 3):.4f} pcpu_us_per_iter={med(allr, 7):.3f}")
    alli = iters[True] + iters[False]
    allc = iters_cpu[True] + iters_cpu[False]
    qs = (("p10", .1), ("p25", .25), ("min", 0), ("med", .5))
    out += "".join(f" it_{k}_us={quantile(alli, q):.3f}" for k, q in qs)
    out += "".join(f" it_cpu_{k}_us={quantile(allc, q):.3f}" for k, q in qs)
    for name, i in (("inst_per_iter", 4), ("cyc_per_iter", 5), ("csw", 6)):
        if all(r[i] == r[i] for r in allr):  # not NaN: the counter opened
            out += f" {name}={med(allr, i):.1f}"
    if toggle and rows[False]:
        on_, off = rows[True], rows[False]
        out += "".join(f" onoff_{k}={quantile(iters[True], q) / quantile(iters[False], q):.4f}"
                       for k, q in (("p10", .1), ("p25", .25)))
        out += "".join(f" onoff_cpu_{k}={quantile(iters_cpu[True], q) / quantile(iters_cpu[False], q):.4f}"
                       for k, q in (("p10", .1), ("p25", .25)))
        out += "".join(f" {k}={med(on_, i) / med(off, i):.4f}" for k, i in
                       (("onoff", 0), ("onoff_cpu", 1), ("onoff_cal", 2), ("onoff_cpu_cal", 3))
                       + ((("onoff_inst", 4),) if all(r[4] == r[4] for r in allr) else ()))
    print(f"SETUP model_s={t_model - t_start:.2f} warmup_s={t_warm - t_model:.2f} "
          f"blocks_s={time.perf_counter() - t_warm:.2f}")
    for st_ in (True, False):
        if iters[st_]:
            print(f"ITERS {'on' if st_ else 'off'} " + " ".join(f"{v:.1f}" for v in iters[st_]))
    print("RESULT " + out, flush=True)


def run_one(workload, env, timeout):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.dup2(w, 1)
        os.dup2(w, 2)
        for k, v in env:
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        code = 0
        try:
            child(workload)
        except BaseException as e:  # noqa: BLE001 - reported to the parent, which goes on
            print(f"child failed: {e!r}", flush=True)
            code = 1
        sys.stdout.flush()
        os._exit(code)
    os.close(w)
    out, end = b"", time.time() + timeout
    while True:
        ready, _, _ = select.select([r], [], [], max(0.0, end - time.time()))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    return rc, out.decode(errors="replace")


def main():
    spec, rounds, workload = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    variants = []
    for line in open(spec):
        parts = line.split()
        if not parts:
            continue
        env = []
        for p in parts[1:]:
            if p.startswith("-"):
                env.append((p[1:], None))
            else:
                k, v = p.split("=", 1)
                env.append((k, v))
        variants.append((parts[0], env))
    timeout = float(os.environ.get("RUN_TIMEOUT", "60"))
    deadline = float(os.environ.get("DEADLINE", "0") or 0)
    log = open(os.environ.get("FORK_LOG", "/dev/null"), "a")
    n = len(variants)
    for rnd in range(rounds):
        order = [variants[(i + rnd) % n] for i in range(n)]
        if rnd % 2:
            order.reverse()
        for name, env in order:
            if deadline and time.time() >= deadline:
                print("price_fork.py: deadline reached", flush=True)
                return
            t0 = time.time()
            rc, out = run_one(workload, env, timeout)
            log.write(f"== {name} round {rnd} rc {rc}\n{out}")
            log.flush()
            res = [l for l in out.splitlines() if l.startswith("RESULT")]
            tail = res[-1].split(" ", 1)[1] if res else ""
            print(f"RUN workload=fork-{workload} variant={name} round={rnd} rc={rc} run_s={time.time() - t0:.1f} {tail}",
                  flush=True)


if __name__ == "__main__":
    main()
