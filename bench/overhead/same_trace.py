#!/usr/bin/env python3
"""Do two traces of the same program say the same thing? Compares what a
recorder change must keep: the kernel multiset (and order), the launch->op
flows, the NVTX ranges and their GPU projections, and the thread lanes of
the API calls, ignoring times and ids.

    python3 bench/overhead/same_trace.py OLD.json NEW.json
"""
import collections
import json
import sys


def facts(path):
    t = json.load(open(path))
    ev = t["traceEvents"] if isinstance(t, dict) else t
    by_cat = collections.defaultdict(list)
    for e in ev:
        by_cat[e.get("cat")].append(e)
    for v in by_cat.values():
        v.sort(key=lambda e: e.get("ts", 0))
    lanes = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            # "thread 4242 (python3)": the process's ids differ from run to run.
            name = e["args"]["name"]
            lanes[(e["pid"], e["tid"])] = name[name.find("("):] if name.startswith("thread ") else name
    out = {
        "kernels in order": [e["name"] for e in by_cat["kernel"]],
        "memcpys": [e["name"] for e in by_cat["gpu_memcpy"]],
        "kernels' annotation stacks": [(e["name"], str(e["args"].get("annotation stack", e["args"].get("annotation"))))
                                       for e in by_cat["kernel"]],
        "graph kernels led back to their capture node": sum("capture node" in e["args"] for e in by_cat["kernel"]),
        "flow events (ac2g)": len(by_cat["ac2g"]),
        "flow ends per kernel name": collections.Counter(
            e["name"] for e in by_cat["kernel"] if "correlation" in e.get("args", {})),
        "NVTX ranges in order": [e["name"] for e in by_cat["user_annotation"]],
        "GPU projections of ranges": [e["name"] for e in by_cat["gpu_user_annotation"]],
        "API calls per thread lane": collections.Counter(
            (lanes.get((e["pid"], e["tid"]), "?"), e["name"]) for e in by_cat["cuda_runtime"]),
        "driver calls per thread lane": collections.Counter(
            (lanes.get((e["pid"], e["tid"]), "?"), e["name"]) for e in by_cat["cuda_driver"]),
        "thread lanes": sorted(set(lanes.values())),
    }
    return out


a, b = facts(sys.argv[1]), facts(sys.argv[2])
same = True
for k in a:
    ok = a[k] == b[k]
    same &= ok
    n = a[k] if isinstance(a[k], int) else len(a[k])
    if not ok and isinstance(a[k], int):
        n = f"{a[k]} against {b[k]}"
    print(f"{'same' if ok else 'DIFFERENT'}: {k} ({n})")
sys.exit(0 if same else 1)
