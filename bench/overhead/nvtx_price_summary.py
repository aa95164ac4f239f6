#!/usr/bin/env python3
"""nvtx_price.sh's rounds as a table: per variant and case, the median over
rounds of nvtx_ranges' ns per range (each round's value is already its
blocks' median) and the increment over base's, with the rounds' spread of
that increment (the same round's base subtracted, so a slow round cancels).

    nvtx_price_summary.py ROUNDS.txt [BASE]
"""
import collections
import statistics
import sys


def main(path, base="base"):
    runs = collections.defaultdict(dict)  # (variant) -> {round: {case: ns}}
    for line in open(path):
        if not line.startswith("ROUND "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        v, r = f.pop("variant"), f.pop("round")
        runs[v][r] = {k: float(x) for k, x in f.items()}
    if base not in runs:
        sys.exit(f"no {base} rounds in {path}")
    cases = list(next(iter(runs[base].values())).keys())
    print("| variant | " + " | ".join(cases) + " |")
    print("|---|" + "---|" * len(cases))
    for v in sorted(runs, key=lambda v: (v != base, v)):
        cells = []
        for c in cases:
            vals = [runs[v][r][c] for r in runs[v] if c in runs[v][r]]
            if not vals:
                cells.append("")
                continue
            med = statistics.median(vals)
            if v == base:
                cells.append(f"{med:.1f}")
                continue
            inc = [runs[v][r][c] - runs[base][r][c] for r in runs[v] if r in runs[base] and c in runs[v][r]]
            lo, hi = (min(inc), max(inc)) if inc else (0, 0)
            cells.append(f"{med:.1f} (+{statistics.median(inc):.1f}, {lo:+.0f}..{hi:+.0f})" if inc else f"{med:.1f}")
        print(f"| {v} | " + " | ".join(cells) + " |")
    print("\nns per range (push+pop, start+end); in brackets the increment over base: median of rounds, min..max")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(*sys.argv[1:3])
