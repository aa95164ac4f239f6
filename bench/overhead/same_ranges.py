#!/usr/bin/env python3
"""Do two traces hold the same NVTX ranges per thread? same_trace.py orders
ranges by time across threads, which two runs of a multi-threaded program
need not share; this compares each thread lane's ranges in its own order
(and the kernels' annotation stacks), as they are and with every number
masked (PyTorch's names carry sequence numbers that shift with the
program's own timing).

    python3 bench/overhead/same_ranges.py A.json B.json
"""
import collections
import json
import re
import sys


def facts(path):
    t = json.load(open(path))
    ev = t["traceEvents"] if isinstance(t, dict) else t
    lanes = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            name = e["args"]["name"]
            lanes[(e["pid"], e["tid"])] = name[name.find("("):] if name.startswith("thread ") else name
    per_lane = collections.defaultdict(list)
    for e in sorted((e for e in ev if e.get("cat") == "user_annotation"), key=lambda e: e.get("ts", 0)):
        per_lane[lanes.get((e["pid"], e["tid"]), "?")].append(e["name"])
    stacks = [(e["name"], str(e["args"].get("annotation stack", e["args"].get("annotation"))))
              for e in sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e.get("ts", 0))]
    return per_lane, stacks


def mask(x):
    return json.loads(re.sub(r"\d+", "N", json.dumps(x)))


(la, sa), (lb, sb) = facts(sys.argv[1]), facts(sys.argv[2])
for what, a, b in (("ranges per thread lane", la, lb), ("kernels' annotation stacks", sa, sb)):
    for how, f in (("as recorded", lambda x: x), ("numbers masked", mask)):
        fa, fb = f(a), f(b)
        same = fa == fb
        print(f"{'same' if same else 'DIFFERENT'}: {what}, {how} ({sum(map(len, fa.values())) if isinstance(fa, dict) else len(fa)})")
        if not same and isinstance(fa, dict):
            for lane in sorted(set(fa) | set(fb)):
                x, y = fa.get(lane, []), fb.get(lane, [])
                if x != y:
                    i = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
                    print(f"  lane {lane}: {len(x)} against {len(y)}, first difference at {i}: "
                          f"{x[i][:90] if i < len(x) else '-'} | {y[i][:90] if i < len(y) else '-'}")
