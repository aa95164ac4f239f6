#!/usr/bin/env python3
"""Tables from bench/overhead/price.sh output (RUN lines).

    python3 bench/overhead/price_summary.py run.log [BASE]

For each workload and metric, per variant: the median over rounds, the
median of the per-round ratios to BASE (default: base) with their range, the
mean of the per-round log ratios with twice its standard error (what the
rounds can resolve: a difference outside +-2 SE is not noise at ~95%), and
the number of rounds. A ratio is a variant's run over the base run of the
same round, so drift between rounds cancels; base2 over base is the method's
own spread. In-process on/off ratios (*onoff*: recording blocks over paused
blocks of one process) are printed as they are, median and range over runs.
"""
import math
import re
import statistics as st
import sys
from collections import defaultdict

FORK = ["us_per_iter", "it_p10_us", "it_p25_us", "it_min_us", "it_med_us", "cpu_us_per_iter", "it_cpu_p10_us",
        "it_cpu_p25_us", "it_cpu_min_us", "it_cpu_med_us", "cal", "cpu_cal", "inst_per_iter", "cyc_per_iter",
        "pcpu_us_per_iter", "csw", "onoff", "onoff_p10", "onoff_p25", "onoff_cpu", "onoff_cpu_p10", "onoff_cpu_p25",
        "onoff_cal", "onoff_cpu_cal", "onoff_inst"]
METRICS = {
    "step": ["ms_per_iter", "cpu_ms_per_iter"],
    "launch": ["launch_us", "launch_p10_us", "launch_p25_us", "launch_min_us", "launch_cpu_us", "launch_cal",
               "launch_inst", "launch_cyc", "launch_pcpu_us", "launch_csw",
               "mix_us", "mix_p10_us", "mix_p25_us", "mix_min_us", "mix_cpu_us", "mix_cal", "mix_inst", "mix_cyc",
               "mix_pcpu_us", "mix_csw", "calib_us",
               "launch_onoff", "launch_onoff_p10", "launch_onoff_p25", "launch_onoff_cpu", "launch_onoff_cal",
               "launch_onoff_inst", "mix_onoff", "mix_onoff_p10", "mix_onoff_p25", "mix_onoff_cpu", "mix_onoff_cal",
               "mix_onoff_inst"],
    "fork-step": FORK,
    "fork-graph": FORK,
}


def pct(x):
    return f"{(x - 1) * 100:+.1f}"


def spread(ratios):
    """Mean of log ratios +- 2 standard errors, as percentages."""
    logs = [math.log(r) for r in ratios]
    m = st.mean(logs)
    if len(logs) < 2:
        return f"{pct(math.exp(m))}%"
    se = st.stdev(logs) / math.sqrt(len(logs))
    return f"{pct(math.exp(m))}% +-{2 * se * 100:.1f}"


def main():
    base = sys.argv[2] if len(sys.argv) > 2 else "base"
    runs = defaultdict(dict)  # (workload, variant) -> round -> {metric: value}
    order = defaultdict(list)
    failed = []
    for line in open(sys.argv[1]):
        if not line.startswith("RUN "):
            continue
        kv = dict(re.findall(r"([\w-]+)=([^\s]+)", line))
        w, v = kv["workload"], kv["variant"]
        if kv.get("rc") != "0" or not any(m in kv for m in METRICS.get(w, [])):
            failed.append(line.strip())
            continue
        if v not in order[w]:
            order[w].append(v)
        runs[(w, v)][int(kv["round"])] = {m: float(kv[m]) for m in METRICS[w] if m in kv}
    for w, variants in order.items():
        for m in METRICS[w]:
            if not any(m in x for v in variants for x in runs[(w, v)].values()):
                continue
            inproc = "onoff" in m
            print(f"\n{w} {m}: " + ("in-process ratio, median (range) over runs" if inproc else
                                    f"median over rounds; per-round ratio to {base}: median (min-max), "
                                    "mean of logs +-2 SE"))
            print(f"| variant | n | median | ratio to {base} | per-round range | mean +-2SE |")
            print("|---|---|---|---|---|---|")
            b = runs.get((w, base), {})
            for v in variants:
                rs = runs[(w, v)]
                vals = [x[m] for x in rs.values() if m in x]
                if not vals:
                    continue
                if inproc:
                    rtxt, rng, sp = f"{pct(st.median(vals))}%", f"{pct(min(vals))} to {pct(max(vals))}", spread(vals)
                else:
                    ratios = [rs[r][m] / b[r][m] for r in rs if r in b and m in rs[r] and m in b[r] and b[r][m] > 0
                              and rs[r][m] > 0]
                    if ratios and v != base:
                        rtxt = f"{pct(st.median(ratios))}%"
                        rng = f"{pct(min(ratios))} to {pct(max(ratios))}"
                        sp = spread(ratios)
                    else:
                        rtxt, rng, sp = "-", "-", "-"
                print(f"| {v} | {len(vals)} | {st.median(vals):.4f} | {rtxt} | {rng} | {sp} |")
    if failed:
        print("\nFAILED RUNS:")
        for f in failed:
            print("  " + f)


if __name__ == "__main__":
    main()
