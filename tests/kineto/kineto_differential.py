#!/usr/bin/env python3
"""Kineto-differential check: gpucap's trace of a PyTorch program against
Kineto's trace of the same program (fixtures/kineto/, recorded on the H200 by
tests/gpu/record_kineto_pairs.sh, two runs of one deterministic program).

Everything is derived from the two traces here, by the rules a PyTorch user
reads them with, independently of gpucap's join:

  - a step is a CPU range (record_function in Kineto's, NVTX in gpucap's)
    whose whole name matches the pair's step pattern;
  - a GPU op (kernel, memcpy, memset) is launched by the runtime or driver
    call with its correlation id; it belongs to the step open on its
    launching thread at the launch, or, when that thread has none, to the
    step open then on another thread (PyTorch's autograd thread launches the
    backward pass while the main thread is in the step);
  - an op's range is the innermost of the program's CPU ranges open around
    its launch on the launching thread (the program's: range names both
    traces have; Kineto adds torch's own record_functions, gpucap NCCL's
    NVTX ranges);
  - a thread's role is the one the program wrote down for its tid in each
    run (the pair's manifest: main, autograd, second-thread, ...).

For each compared step the two traces must agree on the multiset of GPU ops
(kernels by name, copies and sets by kind and bytes) per launching role, on
the sequence of (op, range) per role in launch order, and on how many ops a
graph launch ran. Then gpucap's own answers are held to the same derivation:
each op's `annotation` argument, and the ops of each window of
`-w nvtx:STEP` (and `-w marks` where the recorder marked the steps).

A difference Kineto and gpucap are known to have (docs/semantics.md,
"Where gpucap and Kineto differ"; documented_differences.json beside this
file) is rewritten into gpucap's form before comparing, and each such
rewrite must fire exactly as often as written there: a documented
difference that disappears or grows fails as well.

Usage: kineto_differential.py GPUCAP FIXTURES_DIR [NAME...]
"""
import collections
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}
# CPU ranges: the program's record_function/NVTX ranges, and operators
# (Kineto's own cpu_ops; gpucap's from emit_nvtx ranges). Only the names
# both traces have count as the program's (program_ranges), so Kineto's
# operators take part only where gpucap saw them too.
RANGE_CATS = {"user_annotation", "cpu_op"}


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def ns(v, base=0):
    """Chrome JSON microseconds (float, 3 decimals) after `base` ns to
    integer ns."""
    return base + int(round(float(v) * 1000))


class Trace:
    """The events of one Chrome trace that the rules above read."""

    def __init__(self, doc, label):
        self.label = label
        self.ranges = collections.defaultdict(list)  # tid -> [(start, end, name)]
        self.launches = {}  # correlation -> (tid, ts, name)
        self.ops = []  # dicts: key, correlation, ts, args
        self.operators = []  # cpu_ops: (tid, ts, name)
        self.thread_names = {}
        base = int(doc.get("baseTimeNanoseconds", 0))  # each window file has its own
        for e in doc["traceEvents"]:
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                # Kineto names a thread twice ("thread N (python3)", then
                # "thread N (pt_autograd_0)"): the last word stands.
                self.thread_names[e["tid"]] = e.get("args", {}).get("name", "")
            if e.get("ph") != "X":
                continue
            cat = e.get("cat")
            args = e.get("args", {})
            if cat in RANGE_CATS:
                start = ns(e["ts"], base)
                self.ranges[e["tid"]].append((start, start + ns(e.get("dur", 0)), e["name"]))
                if cat == "cpu_op":
                    self.operators.append((e["tid"], start, e["name"]))
            elif cat in LAUNCH_CATS and "correlation" in args:
                self.launches[args["correlation"]] = (e["tid"], ns(e["ts"], base), e["name"])
            elif cat in GPU_CATS and "correlation" in args:
                self.ops.append({"key": op_key(cat, e["name"], args), "correlation": args["correlation"],
                                 "ts": ns(e["ts"], base), "args": args, "cat": cat})
        for tid in self.ranges:
            # Outermost first at equal starts, as both tools nest them.
            self.ranges[tid].sort(key=lambda r: (r[0], -(r[1] - r[0])))

    def open_at(self, tid, t, names=None):
        """Ranges of `tid` open at t (start <= t < end), outermost first;
        only those named in `names` when given."""
        return [r for r in self.ranges.get(tid, ()) if r[0] <= t < r[1] and (names is None or r[2] in names)]

    def range_names(self):
        return {r[2] for rs in self.ranges.values() for r in rs}

    def steps(self, pattern):
        out = []
        for tid, rs in self.ranges.items():
            out.extend((r[0], r[1], r[2], tid) for r in rs if pattern.fullmatch(r[2]))
        return sorted(out)


def op_key(cat, name, args):
    if cat == "kernel":
        return ("kernel", name)
    if cat == "gpu_memcpy":
        return ("memcpy", name, args.get("bytes"))
    return ("memset", name, args.get("bytes"))


def roles_of(entry, side):
    """tid -> role, as the program wrote them down for that run."""
    out = {}
    for role, threads in entry["threads_by_role"][side].items():
        for t in threads:
            out[t["tid"]] = role
    return out


def step_of(trace, steps, tid, t):
    """The step rule: the launching thread's own step, else the latest-
    starting one open on another thread."""
    own = [s for s in steps if s[3] == tid and s[0] <= t < s[1]]
    if own:
        return own[-1][2]
    other = [s for s in steps if s[3] != tid and s[0] <= t < s[1]]
    return other[-1][2] if other else None


def derive(trace, pattern, compared, roles, program_ranges):
    """Per compared step and role: the ops in launch order, each as
    (key, innermost program range, launched by a graph launch). Sets on
    each op its step, role, program range and innermost range of all."""
    steps = trace.steps(pattern)
    out = collections.defaultdict(list)
    unlaunched = 0
    for op in trace.ops:
        launch = trace.launches.get(op["correlation"])
        if launch is None:
            unlaunched += 1
            continue
        tid, t, call = launch
        step = step_of(trace, steps, tid, t)
        if step not in compared:
            continue
        inner = trace.open_at(tid, t, program_ranges)
        every = trace.open_at(tid, t)
        op["step"], op["role"] = step, roles.get(tid, "unnamed thread")
        op["range"] = inner[-1][2] if inner else None
        op["innermost"] = every[-1][2] if every else None
        op["graph"] = "Graph" in call
        graph = "Graph" in call
        out[(step, op["role"])].append((t, op["ts"], op["key"], op["range"], graph))
    for k in out:
        out[k].sort()
        out[k] = [x[2:] for x in out[k]]
    return out, unlaunched


def apply_differences(seq, differences, counts):
    """Kineto's form of an op rewritten into gpucap's, for the documented
    differences; counts how often each fired."""
    out = []
    for key, rng, graph in seq:
        for d in differences:
            if key[0] == d["kineto"]["kind"] and re.fullmatch(d["kineto"]["name"], key[1]) and \
                    (d.get("graph") is None or d["graph"] == graph):
                want = d["gpucap"]
                if want["kind"] == "kernel":
                    key = ("kernel", want["name"])
                else:
                    key = (want["kind"], want["name"], want.get("bytes", key[2] if len(key) > 2 else None))
                counts[d["id"]] += 1
                break
        out.append((key, rng, graph))
    return out


def gpucap_build(gpucap, capture, out, window=None, steps=None):
    cmd = [gpucap, "build", capture, "-o", out, "-q"]
    if window:
        cmd += ["-w", window]
    if steps:
        cmd += ["--steps", steps]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + " failed: " + r.stderr)


def window_files(folder):
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".json"))


class Check:
    def __init__(self, name):
        self.name = name
        self.failures = []
        self.passed = 0

    def expect(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failures.append(what)


def describe_diff(a, b):
    ca, cb = collections.Counter(a), collections.Counter(b)
    only_a = list((ca - cb).items())[:5]
    only_b = list((cb - ca).items())[:5]
    return "only Kineto: %s; only gpucap: %s" % (only_a, only_b)


def check_pair(gpucap, folder, entry, tmp, differences):
    c = Check(entry["program"])
    step_regex = entry["step_regex"]
    pattern = re.compile(step_regex)
    compared = set(entry["compared_steps"])
    kineto = Trace(load_json(os.path.join(folder, entry["kineto_trace"])), "kineto")
    capture = os.path.join(folder, entry["capture"])
    whole = os.path.join(tmp, entry["program"] + ".json")
    gpucap_build(gpucap, capture, whole, steps=step_regex)
    ours = Trace(load_json(whole), "gpucap")
    program_ranges = kineto.range_names() & ours.range_names()
    for side, trace in (("kineto", kineto), ("gpucap", ours)):
        seen = {s[2] for s in trace.steps(pattern)}
        c.expect(compared <= seen, "%s's trace lacks steps %s" % (side, sorted(compared - seen)))

    k_ops, _ = derive(kineto, pattern, compared, roles_of(entry, "kineto"), program_ranges)
    g_ops, _ = derive(ours, pattern, compared, roles_of(entry, "gpucap"), program_ranges)
    counts = collections.Counter()
    for k in list(k_ops):
        k_ops[k] = apply_differences(k_ops[k], differences, counts)
    for d in differences:
        c.expect(counts[d["id"]] == d["count"],
                 "documented difference %s fired %d times, the manifest says %d" % (d["id"], counts[d["id"]], d["count"]))

    # 1. Per step and role: the multiset of ops, then (op, range) in order.
    for key in sorted(set(k_ops) | set(g_ops), key=str):
        ks, gs = k_ops.get(key, []), g_ops.get(key, [])
        kk, gk = [x[0] for x in ks], [x[0] for x in gs]
        c.expect(collections.Counter(kk) == collections.Counter(gk),
                 "%s %s: ops differ (%d against %d): %s" % (key[0], key[1], len(kk), len(gk), describe_diff(kk, gk)))
        if kk == gk:
            kr, gr = [x[1] for x in ks], [x[1] for x in gs]
            bad = [(i, kk[i][1][:60], kr[i], gr[i]) for i in range(len(kr)) if kr[i] != gr[i]]
            c.expect(not bad, "%s %s: innermost range of %d ops differs, first %s" % (key[0], key[1], len(bad), bad[:3]))
        elif collections.Counter(kk) == collections.Counter(gk):
            c.expect(False, "%s %s: same ops, in another launch order" % key)
        kg, gg = sum(1 for x in ks if x[2]), sum(1 for x in gs if x[2])
        c.expect(kg == gg, "%s %s: graph-launched ops %d against %d" % (key[0], key[1], kg, gg))

    # 2. gpucap's own annotation of each op: the innermost range on its
    # thread (any range: NCCL's too), else (a thread with none) the step the
    # rule gives.
    annotated = 0
    for op in ours.ops:
        if op.get("step") not in compared:
            continue
        want = op["innermost"] if op["innermost"] is not None else op["step"]
        got = op["args"].get("annotation")
        annotated += got is not None
        if op["graph"]:
            # A replayed op's stack is its launch's stack above its node's
            # capture-time stack (docs/semantics.md), which this trace does
            # not show: the launch's part must be there.
            stack = op["args"].get("annotation stack", [])
            c.expect(want in stack, "gpucap annotation stack %r of graph-replayed %s lacks %r" %
                     (stack, op["key"][1][:60], want))
            continue
        c.expect(got == want, "gpucap annotation %r of %s (step %s, %s) where the rule gives %r" %
                 (got, op["key"][1][:60], op["step"], op["role"], want))

    # 2b. Operators, where gpucap's trace has them (emit_nvtx ranges drawn
    # as cpu_op): per compared step, by the step rule, the multiset of
    # operator names equals Kineto's cpu_ops.
    if ours.operators:
        def by_step(trace):
            steps = trace.steps(pattern)
            out = collections.defaultdict(collections.Counter)
            for tid, t, name in trace.operators:
                step = step_of(trace, steps, tid, t)
                if step in compared:
                    out[step][name] += 1
            return out
        k_by, g_by = by_step(kineto), by_step(ours)
        for step in sorted(compared):
            k, g = k_by.get(step, collections.Counter()), g_by.get(step, collections.Counter())
            c.expect(k == g, "%s: operators differ (%d in Kineto's, %d in gpucap's): Kineto only %s, gpucap only %s" %
                     (step, sum(k.values()), sum(g.values()), list((k - g).items())[:4], list((g - k).items())[:4]))
            c.expect(sum(g.values()) > 0, "%s: no operators in gpucap's trace" % step)

    # 3. The windows gpucap builds hold exactly the derived ops of each step.
    derived = collections.defaultdict(collections.Counter)
    for op in ours.ops:
        if op.get("step") in compared:
            derived[op["step"]][op["correlation"], op["ts"]] += 1
    specs = ["nvtx:" + step_regex] + (["marks"] if entry.get("record_time_marks") else [])
    for spec in specs:
        for steps_flag in (None, step_regex):
            folder_out = tempfile.mkdtemp(dir=tmp)
            gpucap_build(gpucap, capture, os.path.join(folder_out, "t.json"), window=spec, steps=steps_flag)
            seen = set()
            for path in window_files(folder_out):
                doc = load_json(path)
                w = Trace(doc, "window")
                step = doc.get("gpucap", {}).get("window", {}).get("label")
                if step not in compared:
                    continue
                seen.add(step)
                got = collections.Counter((o["correlation"], o["ts"]) for o in w.ops)
                c.expect(got == derived[step], "-w '%s' (steps %s): window %s holds %d ops, the rule gives %d" %
                         (spec, steps_flag, step, sum(got.values()), sum(derived[step].values())))
            c.expect(seen == compared, "-w '%s': windows of steps %s missing" % (spec, sorted(compared - seen)))
    return c, annotated


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    gpucap, folder = argv[1], argv[2]
    only = set(argv[3:])
    manifest = load_json(os.path.join(folder, "manifest.json"))
    documented = load_json(os.path.join(os.path.dirname(os.path.abspath(__file__)), "documented_differences.json"))
    failed = passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for entry in manifest["pairs"]:
            if only and entry["program"] not in only:
                continue
            c, annotated = check_pair(gpucap, folder, entry, tmp,
                                      documented["programs"].get(entry["program"], []))
            passed += c.passed
            status = "ok" if not c.failures else "FAILED"
            print("%s: %s (%d checks, %d ops annotated)" % (entry["program"], status, c.passed + len(c.failures), annotated))
            for f in c.failures[:20]:
                print("  " + f)
            if len(c.failures) > 20:
                print("  ... and %d more" % (len(c.failures) - 20))
            failed += len(c.failures)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
