#!/usr/bin/env python3
"""Tables from bench/overhead/price.sh output (RUN lines).

    python3 bench/overhead/price_summary.py run.log [BASE]

For each workload and metric, per variant: the median over rounds, the
median of the per-round ratios to BASE (default: base) with their range, and
the number of rounds. A ratio is a variant's run over the base run of the
same round, so drift between rounds cancels; base2 over base is the method's
own spread.
"""
import re
import statistics as st
import sys
from collections import defaultdict

METRICS = {
    "step": ["ms_per_iter", "cpu_ms_per_iter"],
    "launch": ["launch_us", "launch_cpu_us", "mix_us", "mix_cpu_us"],
}


def main():
    base = sys.argv[2] if len(sys.argv) > 2 else "base"
    runs = defaultdict(dict)  # (workload, variant) -> round -> {metric: value}
    order = defaultdict(list)
    failed = []
    for line in open(sys.argv[1]):
        if not line.startswith("RUN "):
            continue
        kv = dict(re.findall(r"(\w+)=([^\s]+)", line))
        w, v = kv["workload"], kv["variant"]
        if kv.get("rc") != "0" or not any(m in kv for m in METRICS.get(w, [])):
            failed.append(line.strip())
            continue
        if v not in order[w]:
            order[w].append(v)
        runs[(w, v)][int(kv["round"])] = {m: float(kv[m]) for m in METRICS[w] if m in kv}
    for w, variants in order.items():
        for m in METRICS[w]:
            print(f"\n{w} {m}: median over rounds; per-round ratio to {base}: median (min-max)")
            print(f"| variant | n | median | ratio to {base} | per-round range |")
            print("|---|---|---|---|---|")
            b = runs.get((w, base), {})
            for v in variants:
                rs = runs[(w, v)]
                vals = [x[m] for x in rs.values() if m in x]
                if not vals:
                    continue
                ratios = [rs[r][m] / b[r][m] for r in rs if r in b and m in rs[r] and m in b[r]]
                if ratios and v != base:
                    rtxt = f"{(st.median(ratios) - 1) * 100:+.1f}%"
                    rng = f"{(min(ratios) - 1) * 100:+.1f} to {(max(ratios) - 1) * 100:+.1f}"
                else:
                    rtxt, rng = "-", "-"
                print(f"| {v} | {len(vals)} | {st.median(vals):.4f} | {rtxt} | {rng} |")
    if failed:
        print("\nFAILED RUNS:")
        for f in failed:
            print("  " + f)


if __name__ == "__main__":
    main()
