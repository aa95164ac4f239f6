#!/usr/bin/env python3
"""Two gpucap binaries' exports side by side: rows per CPU second.

    bench/export/compare.py OLD_GPUCAP NEW_GPUCAP [--rounds N] [--window SPEC]
                            [--no-indexes] [--parallel P] CASE...

A CASE is one capture, or several joined by '+'. The binaries run in turns
(old, new, old, new, ...) for each case, `--rounds` times each, so load on
the machine falls on both alike; a run's CPU time is the user + system
time of the `gpucap export` process (os.wait4), its rows those of every
table of the database it wrote. Per case and in total, the median over the
rounds: rows, CPU seconds, rows per CPU second, and new / old.
"""
import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def rows_of(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
    n = sum(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables)
    db.close()
    return n


def run(gpucap, captures, out, a):
    cmd = [gpucap, "export", *captures, "-q", "-o", out]
    if a.window:
        cmd += ["--window", a.window]
    if a.no_indexes:
        cmd.append("--no-indexes")
    if a.parallel:
        cmd += ["--parallel", str(a.parallel)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, wall, rows_of(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("cases", nargs="+")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--window", default="")
    p.add_argument("--no-indexes", action="store_true")
    p.add_argument("--parallel", type=int, default=0)
    a = p.parse_args()
    total = {"old": [0.0] * a.rounds, "new": [0.0] * a.rounds}
    total_rows = {"old": 0, "new": 0}
    print(f"{'case':40} {'rows':>10} {'old CPU s':>10} {'new CPU s':>10} {'old rows/CPU-s':>15} "
          f"{'new rows/CPU-s':>15} {'new/old':>8}")
    with tempfile.TemporaryDirectory(prefix="export_compare.") as tmp:
        for case in a.cases:
            captures = case.split("+")
            cpu = {"old": [], "new": []}
            rows = {}
            for r in range(a.rounds):
                for side, gpucap in (("old", a.old), ("new", a.new)):
                    out = os.path.join(tmp, f"{side}.sqlite")
                    c, _, n = run(gpucap, captures, out, a)
                    cpu[side].append(c)
                    total[side][r] += c
                    rows[side] = n
                    os.remove(out)
            if rows["old"] != rows["new"]:
                print(f"  note: {case}: {rows['old']} rows (old) vs {rows['new']} (new)")
            for side in rows:
                total_rows[side] += rows[side]
            o, n = statistics.median(cpu["old"]), statistics.median(cpu["new"])
            name = os.path.basename(case) if len(case) <= 40 else "..." + case[-37:]
            print(f"{name:40} {rows['new']:>10} {o:>10.3f} {n:>10.3f} {rows['old'] / o:>15.0f} "
                  f"{rows['new'] / n:>15.0f} {(rows['new'] / n) / (rows['old'] / o):>8.2f}")
    o, n = statistics.median(total["old"]), statistics.median(total["new"])
    print(f"{'total':40} {total_rows['new']:>10} {o:>10.3f} {n:>10.3f} {total_rows['old'] / o:>15.0f} "
          f"{total_rows['new'] / n:>15.0f} {(total_rows['new'] / n) / (total_rows['old'] / o):>8.2f}")


if __name__ == "__main__":
    main()
