"""Reads paused_after.sh's RUN lines: per variant, the later paused stretches over the first (the launching
thread's CPU per iteration, mean of the per-run log ratios +-2 SE) and that less the drift the reference
variant (default base) shows. Usage: paused_after_summary.py RUNS.txt [REFERENCE]"""
import math, re, statistics as st, sys
from collections import defaultdict


def main():
    ratios = defaultdict(list)
    failed = []
    for line in open(sys.argv[1]):
        if not line.startswith("RUN "):
            continue
        v = re.search(r"variant=(\S+)", line).group(1)
        rs = [float(x) for x in re.findall(r"r_cpu\d+=([0-9.]+)", line)]
        if not rs:
            failed.append(line.strip())
            continue
        ratios[v].append(math.log(st.mean(rs)))
    ref = sys.argv[2] if len(sys.argv) > 2 else "base"
    print("| variant | runs | later stretches over the first | less %s's drift |" % ref)
    print("|---|---|---|---|")
    for v, xs in ratios.items():
        se2 = 2 * st.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("nan")
        cell = "-"
        r = ratios.get(ref, [])
        if v != ref and len(r) > 1 and len(xs) > 1:
            d = st.mean(xs) - st.mean(r)
            e = 2 * math.sqrt(st.variance(xs) / len(xs) + st.variance(r) / len(r))
            cell = "%+.1f +-%.1f" % (100 * d, 100 * e)
        print("| %s | %d | %+.1f%% +-%.1f | %s |" % (v, len(xs), 100 * (math.exp(st.mean(xs)) - 1), 100 * se2, cell))
    for f in failed:
        print("FAILED:", f)


if __name__ == "__main__":
    main()
