#!/usr/bin/env python3
"""Do two gpucap binaries export the same data?

    bench/export/same_data.py OLD_GPUCAP NEW_GPUCAP [--window SPEC] CASE...

A CASE is one capture, or several joined by '+' (the ranks of one job, in
that order). Each case is exported by both binaries (--parallel 1, so an
older binary's ids follow the command line too) and compared by query
results: the schema (sqlite_schema's type, name, table and SQL), then every
table, every row in rowid order, every column through quote() (so 1, 1.0
and '1' differ), generated columns included. SQLite lays pages out its own
way, so the files themselves are not compared. Prints one line per case;
exits 1 when any case differs.
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile


def export(gpucap, captures, window, out):
    cmd = [gpucap, "export", *captures, "-q", "--parallel", "1", "-o", out]
    if window:
        cmd += ["--window", window]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def dump(path):
    """{'schema': rows, table: rows} for every table of the database."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {"schema": db.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name").fetchall()}
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")]
    for t in tables:
        # table_xinfo lists generated (hidden = 2, 3) columns too.
        cols = [r[1] for r in db.execute(f"PRAGMA table_xinfo({t})")]
        quoted = ", ".join(f"quote({c})" for c in cols)
        out[t] = db.execute(f"SELECT rowid, {quoted} FROM {t} ORDER BY rowid").fetchall()
    db.close()
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("cases", nargs="+")
    p.add_argument("--window", default="")
    a = p.parse_args()
    differ = 0
    with tempfile.TemporaryDirectory(prefix="same_data.") as tmp:
        for i, case in enumerate(a.cases):
            captures = case.split("+")
            dbs = []
            for side, gpucap in (("old", a.old), ("new", a.new)):
                out = os.path.join(tmp, f"{i}.{side}.sqlite")
                export(gpucap, captures, a.window, out)
                dbs.append(dump(out))
            old, new = dbs
            bad = [t for t in sorted(set(old) | set(new)) if old.get(t) != new.get(t)]
            rows = sum(len(v) for k, v in new.items() if k != "schema")
            if bad:
                differ += 1
                print(f"DIFFERENT {case}: {', '.join(bad)}")
                for t in bad[:3]:
                    o, n = old.get(t, []), new.get(t, [])
                    first = next((j for j in range(min(len(o), len(n))) if o[j] != n[j]), min(len(o), len(n)))
                    print(f"  {t}: {len(o)} vs {len(n)} rows; first difference at row {first}:")
                    print(f"    old {o[first] if first < len(o) else None}")
                    print(f"    new {n[first] if first < len(n) else None}")
            else:
                print(f"same {case}: {len(new) - 1} tables, {rows} rows")
    print(f"{len(a.cases) - differ} of {len(a.cases)} cases export the same data")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
