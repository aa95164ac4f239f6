#!/usr/bin/env python3
"""Medians and ratios to base from bench/overhead/run.sh output (RUN lines).

    python3 bench/overhead/summarize.py run.log
"""
import re, statistics, sys
from collections import defaultdict

METRICS = {
    "kernels": ["eager_us_per_kernel", "graph_us_per_kernel"],
    "torch_work": ["ms_per_iter"],
    "torch_graph": ["us_per_replay"],
}

runs = defaultdict(lambda: defaultdict(list))
failed = []
for line in open(sys.argv[1]):
    if not line.startswith("RUN "):
        continue
    kv = dict(re.findall(r"(\w+)=([^\s]+)", line))
    w, v = kv["workload"], kv["variant"]
    if kv.get("rc") != "0":
        failed.append(line.strip())
        continue
    for m in METRICS.get(w, []) + ["stop_ms"]:
        if m in kv:
            runs[(w, m)][v].append(float(kv[m]))

for (w, m), variants in runs.items():
    if m == "stop_ms":
        continue
    base = statistics.median(variants["base"]) if variants.get("base") else None
    print(f"\n{w} {m} (median of n, ratio to base)")
    for v, xs in variants.items():
        med = statistics.median(xs)
        ratio = f"{med / base:.3f}x ({(med / base - 1) * 100:+.1f}%)" if base else "-"
        print(f"  {v:12s} n={len(xs)} median={med:.4f} {ratio}")
for (w, m), variants in runs.items():
    if m == "stop_ms":
        for v, xs in variants.items():
            print(f"\n{w} gpucap stop latency: median {statistics.median(xs):.1f} ms (n={len(xs)}, max {max(xs):.1f})")
if failed:
    print("\nFAILED RUNS:")
    for f in failed:
        print("  " + f)
