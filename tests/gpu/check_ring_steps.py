#!/usr/bin/env python3
"""Checks the flight recorder's step-trigger fixtures (torch_steps.py under
record_fixtures.sh's ring_slow and ring_hang) against their manifests.

    check_ring_steps.py GPUCAP DIR [NAME...]      (NAME: ring_slow, ring_hang, ring_hang_call)

ring_slow: exactly one dump says `slow step: step#S took`, and the job saw it
while it ran; built (`gpucap build`), that dump holds step#S closed, at least
as long as the GPU sleep the job added, and every kernel launched in it
(annotated step#S) with its launch flow, among them the sleep's spin_kernel
and every kernel name of step#S-1.
ring_hang: a dump says `hang: no step closed for` naming step#H-1 as the
last; the job saw that dump while its main thread was blocked in
torch.cuda.synchronize() (released by the dump, not by its timeout) and then
ran to its end; built, the dump holds step#H-1's kernels, each with its
launch flow.
ring_hang_call: the same job under --ring-hang-call instead: a dump says
`hang: ... in flight for ... on thread` (the main thread, blocked in
the synchronize), none says a step hang; the rest as ring_hang.
Prints one line per check; exit status 1 when one failed."""
import collections, glob, gzip, json, os, subprocess, sys

failed = 0


def ok(cond, what):
    global failed
    print(("ok   " if cond else "FAIL ") + what)
    failed += 0 if cond else 1
    return cond


def same(a, b):
    return bool(a) and bool(b) and os.path.realpath(a) == os.path.realpath(b)


def info(g, path):
    r = subprocess.run([g, "info", "--json", path], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def build(g, path, out):
    r = subprocess.run([g, "build", "-q", path, "-o", out], capture_output=True, text=True)
    if r.returncode != 0:
        print("     build:", r.stderr[-400:])
        return None
    return json.load(gzip.open(out) if out.endswith(".gz") else open(out))


def dumps(d, name):
    """(path, trigger) of each dump of fixture `name`."""
    out = []
    for p in sorted(glob.glob(os.path.join(d, glob.escape(name) + ".ring-*.gpucap"))):
        out.append((p, info(g, p).get("shutdown", {}).get("trigger", "")))
    return out


def step_kernels(trace, step):
    """The kernels annotated with `step` (first in their annotation stack),
    and how many of them lack an ac2g flow arriving where they start."""
    ev = trace["traceEvents"]
    arrivals = {(e.get("pid"), e.get("tid"), e.get("ts")) for e in ev if e.get("cat") == "ac2g" and e.get("ph") == "f"}
    ks = []
    for e in ev:
        if e.get("cat") != "kernel":
            continue
        a = e.get("args", {})
        stack = a.get("annotation stack") or [a.get("annotation", "")]
        if stack and stack[0] == step:
            ks.append(e)
    no_flow = sum((e.get("pid"), e.get("tid"), e.get("ts")) not in arrivals for e in ks)
    return ks, no_flow


def check_slow(d):
    man = json.load(open(os.path.join(d, "ring_slow.expect.json")))
    s = man["slow_step"]
    name = f"step#{s}"
    ds = dumps(d, "ring_slow")
    mine = [(p, t) for p, t in ds if t.startswith(f"slow step: {name} took ")]
    print(f"     ring_slow: {len(ds)} dumps: " + "; ".join(t for _, t in ds))
    if not ok(len(mine) == 1, f"ring_slow: one dump for {name}'s slowness"):
        return
    path, trigger = mine[0]
    ok(same(man.get("dump_seen"), path), f"ring_slow: the job saw {os.path.basename(path)} while it ran "
       f"(stepped on to step {man.get('steps_run')})")
    t = build(g, path, path + ".json")
    if not ok(t is not None, "ring_slow: the dump builds"):
        return
    ev = t["traceEvents"]
    ranges = [e for e in ev if e.get("name") == name and e.get("ph") == "X" and "kernel" not in e.get("cat", "")]
    longest = max((e.get("dur", 0) for e in ranges), default=0) / 1e3
    ok(longest >= 0.9 * man["slow_sleep_ms"], f"ring_slow: {name} is in the dump closed, {longest:.1f} ms "
       f"(the job slept {man['slow_sleep_ms']:.1f} ms on the GPU; step took {man['slow_step_ms']:.1f} ms)")
    ks, no_flow = step_kernels(t, name)
    before, _ = step_kernels(t, f"step#{s - 1}")
    names = collections.Counter(e["name"] for e in ks)
    ok(any("spin_kernel" in n for n in names), f"ring_slow: {name}'s GPU sleep (spin_kernel) is in it")
    missing = collections.Counter(e["name"] for e in before) - names
    ok(len(before) > 0 and not missing, f"ring_slow: {name} holds step#{s - 1}'s {len(before)} kernels' names "
       f"({len(ks)} kernels; missing: {dict(missing)})")
    ok(len(ks) > 0 and no_flow == 0, f"ring_slow: every kernel of {name} has its launch flow ({no_flow} without)")


def check_hang(d, name="ring_hang"):
    man = json.load(open(os.path.join(d, name + ".expect.json")))
    last = f"step#{man['last_step_before_hang']}"
    ds = dumps(d, name)
    print(f"     {name}: {len(ds)} dumps: " + "; ".join(t for _, t in ds))
    if name == "ring_hang_call":
        # The main thread blocked in torch.cuda.synchronize() (its name:
        # PyTorch calls it pt_main_thread, else python's).
        mine = [(p, t) for p, t in ds if t.startswith("hang: ") and " in flight for " in t and " on thread " in t]
        if not ok(len(mine) >= 1, f"{name}: a blocked-call dump naming a thread"):
            return
        ok(not any(t.startswith("hang: no step closed") for _, t in ds), f"{name}: no step-hang dump (not asked)")
    else:
        mine = [(p, t) for p, t in ds if t.startswith("hang: no step closed for ") and f"(the last, {last}, " in t]
        if not ok(len(mine) >= 1, f"{name}: a hang dump naming {last} as the last step"):
            return
    ok(man.get("released_by") == "dump" and any(same(man.get("dump_seen"), p) for p, _ in mine),
       f"{name}: written while the job was blocked in synchronize (released by {man.get('released_by')}, "
       f"{man.get('dump_seen_after_s')} s after the block; blocked {man.get('blocked_s')} s)")
    ok(man.get("steps_run") == man["steps"], f"{name}: the job ran on to its end ({man.get('steps_run')} steps)")
    t = build(g, mine[0][0], mine[0][0] + ".json")
    if not ok(t is not None, f"{name}: the dump builds"):
        return
    ks, no_flow = step_kernels(t, last)
    ok(len(ks) > 0 and no_flow == 0, f"{name}: {last}'s {len(ks)} kernels each have their launch flow "
       f"({no_flow} without)")


g, d = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or ["ring_slow", "ring_hang", "ring_hang_call"]
for n in names:
    if not os.path.exists(os.path.join(d, n + ".expect.json")):
        ok(False, f"{n}: no manifest {n}.expect.json (the job did not finish)")
        continue
    {"ring_slow": check_slow, "ring_hang": check_hang,
     "ring_hang_call": lambda d: check_hang(d, "ring_hang_call")}[n](d)
sys.exit(1 if failed else 0)
