"""Summarises a Kineto Chrome trace per step (stdlib only): evidence, not a test.

  kineto_summary.py TRACE.json[.gz] [MANIFEST.json]

For each step range (a user_annotation whose whole name matches the
manifest's step_regex, on any thread) prints the GPU ops whose launch (the
cuda_runtime/cuda_driver event of the same correlation) falls inside it:
kernels by name, copies and sets by name and bytes; then, per launching
thread (by the manifest's roles where the tid is known), how many ops it
launched and the innermost user_annotation around each launch on that
thread. Also the event categories, and any cuda_event / cuda_sync activity.
"""
import bisect
import collections
import gzip
import json
import re
import sys

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def num(v):
    return float(v) if v is not None else 0.0


def main():
    trace = load(sys.argv[1])
    manifest = load(sys.argv[2]) if len(sys.argv) > 2 else {}
    step_re = re.compile(manifest.get("step_regex") or r"(train#|step |infer |iteration#|batch#)\d+")
    roles = {}
    for role, entries in (manifest.get("threads") or {}).items():
        for e in entries:
            roles[str(e["tid"])] = role
    events = trace.get("traceEvents", trace if isinstance(trace, list) else [])
    cats = collections.Counter(e.get("cat", "(none)") for e in events if e.get("ph") != "M")
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[(str(e.get("pid")), str(e.get("tid")))] = e.get("args", {}).get("name")
    launches, gpu, annos = {}, [], collections.defaultdict(list)
    for e in events:
        c, a = e.get("cat"), e.get("args", {})
        if c in LAUNCH_CATS and "correlation" in a:
            launches[a["correlation"]] = e
        elif c in GPU_CATS:
            gpu.append(e)
        elif c == "user_annotation":
            annos[str(e.get("tid"))].append(e)
    steps = sorted((e for v in annos.values() for e in v if step_re.fullmatch(e["name"])), key=lambda e: num(e["ts"]))

    def role(tid):
        return roles.get(str(tid), "?")

    def innermost(tid, ts):
        best = None
        for r in annos.get(str(tid), []):
            s = num(r["ts"])
            if s <= ts <= s + num(r.get("dur")) and (best is None or num(r.get("dur")) < num(best.get("dur"))):
                best = r
        return best["name"] if best else None

    def label(e):
        if e["cat"] == "kernel":
            return e["name"]
        return f'{e["name"]} [{e.get("args", {}).get("bytes")} B]'

    per_step = collections.OrderedDict((s["name"], collections.Counter()) for s in steps)
    threads = collections.Counter()
    inner = collections.Counter()
    launch_api = collections.Counter()
    outside = collections.Counter()
    unlaunched = collections.Counter()
    starts = [num(s["ts"]) for s in steps]
    for e in gpu:
        corr = e.get("args", {}).get("correlation")
        l = launches.get(corr)
        if l is None:
            unlaunched[label(e)] += 1
            continue
        ts, tid = num(l["ts"]), l.get("tid")
        i = bisect.bisect_right(starts, ts) - 1
        step = steps[i]["name"] if i >= 0 and ts <= starts[i] + num(steps[i].get("dur")) else None
        (per_step[step] if step else outside)[label(e)] += 1
        threads[(tid, role(tid), names.get((str(l.get("pid")), str(tid))))] += 1
        inner[(role(tid), innermost(tid, ts))] += 1
        launch_api[l["name"]] += 1
    print(f"trace {sys.argv[1]}: {len(events)} events")
    print("categories:", dict(sorted(cats.items())))
    for name, c in per_step.items():
        print(f"\n{name}: {sum(c.values())} GPU ops, {sum(v for k, v in c.items() if '[' not in k)} kernels")
        for k, v in sorted(c.items()):
            print(f"  {v:4d}  {k}")
    if outside:
        print(f"\noutside any step: {sum(outside.values())}")
        for k, v in sorted(outside.items()):
            print(f"  {v:4d}  {k}")
    if unlaunched:
        print(f"\nno launch event of the same correlation: {sum(unlaunched.values())}")
        for k, v in sorted(unlaunched.items()):
            print(f"  {v:4d}  {k}")
    print("\nlaunching threads (tid, role, thread name): ops")
    for k, v in sorted(threads.items(), key=lambda kv: -kv[1]):
        print(f"  {v:5d}  {k}")
    print("\ninnermost user_annotation at launch (role, range): ops")
    for k, v in sorted(inner.items(), key=lambda kv: -kv[1]):
        print(f"  {v:5d}  {k}")
    print("\nlaunch APIs:", dict(launch_api))
    for cat in ("cuda_event", "cuda_sync"):
        evs = [e for e in events if e.get("cat") == cat]
        if evs:
            print(f"\n{cat}: {len(evs)} events, names {dict(collections.Counter(e['name'] for e in evs))}, "
                  f"durations {sorted(collections.Counter(e.get('dur') for e in evs).items())[:6]}")
            print("  first:", json.dumps(evs[0])[:600])


if __name__ == "__main__":
    main()
