#!/usr/bin/env python3
"""Which statistic of a run's blocks compares processes best: from the
per-block (launch_loop's `BLOCKS` lines) or per-iteration (price_fork's
`ITERS` lines) times that price.sh keeps in its logs, every variant's
per-round ratio to BASE for several quantiles of a run's blocks, as the mean
of the log ratios +-2 standard errors. base2 (base again) is the method's
own spread, and says which quantile to trust.

    quantile_spread.py launch DIR/launch.VARIANT.log ... [--base base] [--series launch|mix]
    quantile_spread.py fork DIR/fork-step.log [--base base]

launch logs hold one run per round, in round order; a fork log holds
`== NAME round R rc RC` headers.
"""
import math
import re
import statistics as st
import sys
from collections import defaultdict

QS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5]


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    i = int(pos)
    return v[i] + (pos - i) * (v[i + 1] - v[i]) if i + 1 < len(v) else v[i]


def launch_runs(paths, series):
    runs = defaultdict(dict)  # variant -> round -> values
    for p in paths:
        v = re.sub(r"^.*?launch\.(.*)\.log$", r"\1", p)
        rnd, cur = -1, None
        for line in open(p):
            if line.startswith("BLOCKS "):
                parts = line.split()
                if parts[1] != series:
                    continue
                if cur is None:
                    rnd += 1
                    cur = runs[v].setdefault(rnd, [])
                cur.extend(float(x) for x in parts[3:])
            elif line.startswith("RESULT"):
                cur = None
    return runs


def fork_runs(path):
    runs = defaultdict(dict)
    name = rnd = None
    for line in open(path):
        m = re.match(r"== (\S+) round (\d+) rc (-?\d+)", line)
        if m:
            name, rnd = m.group(1), int(m.group(2))
            if m.group(3) != "0":
                name = None
            continue
        if name and line.startswith("ITERS "):
            runs[name].setdefault(rnd, []).extend(float(x) for x in line.split()[2:])
    return runs


def main():
    args = sys.argv[1:]
    base = "base"
    series = "launch"
    if "--base" in args:
        i = args.index("--base"); base = args[i + 1]; del args[i:i + 2]
    if "--series" in args:
        i = args.index("--series"); series = args[i + 1]; del args[i:i + 2]
    kind, paths = args[0], args[1:]
    runs = launch_runs(paths, series) if kind == "launch" else fork_runs(paths[0])
    b = runs.get(base, {})
    print(f"per-round ratio to {base}, mean of logs +-2 SE (n rounds), by quantile of a run's "
          f"{'blocks' if kind == 'launch' else 'iterations'}")
    print("| variant | n | " + " | ".join(f"q{q:g}" for q in QS) + " |")
    print("|---" * (len(QS) + 2) + "|")
    for v in sorted(runs, key=lambda x: (x != base, x != base + "2", x)):
        if v == base:
            continue
        cells = []
        common = [r for r in runs[v] if r in b and runs[v][r] and b[r]]
        for q in QS:
            logs = [math.log(quantile(runs[v][r], q) / quantile(b[r], q)) for r in common]
            if len(logs) < 2:
                cells.append("-")
                continue
            m, se = st.mean(logs), st.stdev(logs) / math.sqrt(len(logs))
            cells.append(f"{(math.exp(m) - 1) * 100:+.1f} +-{2 * se * 100:.1f}")
        print(f"| {v} | {len(common)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
