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
RUN_TIMEOUT, DEADLINE. Prints RUN lines in price.sh's format.
"""
import os
import select
import signal
import statistics as st
import sys
import time

import torch  # imported once, before any fork; CUDA is not initialised here


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
    t0 = time.thread_time()
    acc, d = 0, {}
    for i in range(n):
        d[i & 255] = acc
        acc = (acc + d.get((i * 7) & 255, i)) & 0xFFFFFFFF
    return (time.thread_time() - t0) * 1e6 / n


def child(workload):
    blocks, per, warmup = (int(os.environ.get(k, d)) for k, d in (("BLOCKS", "10"), ("PER", "30"), ("WARMUP", "30")))
    cal_n = int(os.environ.get("CALIB_N", "200000"))
    toggle = os.environ.get("TOGGLE", "")
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
    for _ in range(warmup):
        it()
    torch.cuda.synchronize()
    pin(int(os.environ.get("PIN_CPU", "-1")))
    calibrate(cal_n // 4)
    on = True
    rows = {True: [], False: []}
    for b in range(blocks):
        if toggle and b > 0:
            if toggle == "signal":
                os.kill(os.getpid(), signal.SIGUSR2)
            on = not on
            time.sleep(0.15)
        c = calibrate(cal_n)
        torch.cuda.synchronize()
        t0, c0 = time.perf_counter(), time.thread_time()
        for _ in range(per):
            it()
        torch.cuda.synchronize()
        w = (time.perf_counter() - t0) * 1e6 / per
        cp = (time.thread_time() - c0) * 1e6 / per
        rows[on].append((w, cp, w / c, cp / c))
    allr = rows[True] + rows[False]
    med = lambda rs, i: st.median(r[i] for r in rs)
    out = (f"us_per_iter={med(allr, 0):.3f} cpu_us_per_iter={med(allr, 1):.3f} "
           f"cal={med(allr, 2):.4f} cpu_cal={med(allr, 3):.4f}")
    if toggle and rows[False]:
        on_, off = rows[True], rows[False]
        out += "".join(f" {k}={med(on_, i) / med(off, i):.4f}" for k, i in
                       (("onoff", 0), ("onoff_cpu", 1), ("onoff_cal", 2), ("onoff_cpu_cal", 3)))
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
