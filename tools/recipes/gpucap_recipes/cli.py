"""python3 -m gpucap_recipes RECIPE DB... [--scheduler ADDRESS] [--workers N]
[--format csv|json] [-o FILE]: runs one recipe and prints its tables.

csv: each table under a `# NAME` line, tables apart by a blank line. json:
one object, a list of row objects per table name. Exit status: 0 done,
1 a database could not be read (the message names it) or the cluster failed,
2 a usage error.
"""
import argparse
import json
import os
import re
import sys

import pandas as pd

from gpucap_recipes import RECIPES, RecipeError, Runner

UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def duration_ns(text):
    """`500us`, `1.5ms`, `2s`, or a number of ns."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?)\s*(ns|us|ms|s)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r}: a duration such as 500us, 1ms, 2s or a number of ns")
    return int(round(float(m.group(1)) * UNITS[m.group(2) or "ns"]))


def workers(text):
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return n


def parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("databases", nargs="+", metavar="DB",
                        help="gpucap export databases (one per rank, or one of several ranks)")
    common.add_argument("--scheduler", metavar="ADDRESS",
                        help="an existing Dask cluster's scheduler (tcp://host:8786), or 'synchronous' "
                             "to run in this process; default: a local cluster")
    common.add_argument("--workers", type=workers, metavar="N",
                        help="the local cluster's worker processes (default: one per core)")
    common.add_argument("--format", choices=["csv", "json"], default="csv")
    common.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    top = argparse.ArgumentParser(prog="python3 -m gpucap_recipes",
                                  description="Analyses of gpucap SQLite exports on Dask.")
    sub = top.add_subparsers(dest="recipe", required=True, metavar="RECIPE")
    for name, fn in RECIPES.items():
        summary = sys.modules[fn.__module__].__doc__.split("\n")[0].split(": ", 1)[1]
        p = sub.add_parser(name, parents=[common], help=summary, description=summary)
        if name == "gpu_gaps":
            p.add_argument("--min-gap", type=duration_ns, default=1_000_000, metavar="DURATION",
                           help="count gaps longer than this (default 1ms; 0: every gap)")
        if name == "kernel_hist":
            p.add_argument("--names", choices=["demangled", "base", "mangled"], default="demangled")
            p.add_argument("--bins-per-decade", type=int, default=5, metavar="B")
    return top


def to_json_value(v):
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return None
    if hasattr(v, "item"):  # numpy scalars
        return v.item()
    return v


def write(tables, fmt, out):
    if fmt == "json":
        doc = {name: [{k: to_json_value(v) for k, v in row.items()} for row in frame.to_dict("records")]
               for name, frame in tables.items()}
        json.dump(doc, out, indent=1)
        out.write("\n")
        return
    for i, (name, frame) in enumerate(tables.items()):
        if i:
            out.write("\n")
        out.write(f"# {name}\n")
        frame.to_csv(out, index=False, lineterminator="\n")


def main(argv=None):
    args = parser().parse_args(argv)
    options = {}
    if args.recipe == "gpu_gaps":
        options["min_gap_ns"] = args.min_gap
    if args.recipe == "kernel_hist":
        options["names"] = args.names
        options["bins_per_decade"] = args.bins_per_decade
    if args.output:
        for db in args.databases:
            if os.path.exists(db) and os.path.exists(args.output) and os.path.samefile(db, args.output):
                print(f"gpucap_recipes: -o {args.output} is the input {db}", file=sys.stderr)
                return 2
    if args.scheduler and args.workers:
        print("gpucap_recipes: --workers is for the local cluster; not with --scheduler", file=sys.stderr)
        return 2
    try:
        with Runner(args.scheduler, args.workers) as runner:
            tables = RECIPES[args.recipe](args.databases, runner, **options)
    except (RecipeError, ValueError) as e:
        print(f"gpucap_recipes: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a cluster that cannot be reached
        print(f"gpucap_recipes: {args.scheduler or 'local cluster'}: {e}", file=sys.stderr)
        return 1
    if args.output:
        # Whole or not at all: written beside, renamed over it when complete.
        partial = f"{args.output}.tmp-{os.getpid()}"
        try:
            with open(partial, "w", encoding="utf-8", newline="") as out:
                write(tables, args.format, out)
            os.replace(partial, args.output)
        except OSError as e:
            if os.path.exists(partial):
                os.remove(partial)
            print(f"gpucap_recipes: {args.output}: {e}", file=sys.stderr)
            return 1
        return 0
    try:
        write(tables, args.format, sys.stdout)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
