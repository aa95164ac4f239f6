#!/usr/bin/env python3
"""The recipes (tools/recipes) against `gpucap stats` on the same captures.

Exports a multi-rank job with the built gpucap, one database per rank and
one of every rank, runs each recipe in-process ("synchronous") on both
layouts and on a LocalCluster of 2 worker processes, requires the three
answers to be equal, and holds them to figures taken from `gpucap stats
--format json` over the same captures and windows (a different code path:
the builder's traces, not the export's tables):

  - nccl_time: per rank and step, NCCL time = the step's window's stats
    kernels table summed over names starting with `nccl`, and = its devices
    table's communication_ns; wait = that less the step's least across ranks;
  - stragglers: each step's straggler and margin, the rank straggling most
    often, from those stats numbers;
  - gpu_gaps: per stream, ops and busy time = stats' streams table; gaps
    past a threshold (count, total, largest) computed here from stats'
    per-op listing (`--report cuda_gpu_trace`);
  - kernel_hist: per kernel, count, total, min and max = stats' kernels
    tables summed over ranks; every bin's count = the durations of stats'
    per-op listing binned here;
  - step_time: per rank and step, duration = the window's stats window_ns;
    per step min/median/max from those.

A synthetic job (a directory of rank-NNNN.gpucap and job.json, from
`build_bench job DIR --ranks N`) is tested instead when given as the third
argument or GPUCAP_RECIPES_JOB; its job.json's truth (slow_rank,
straggling_step/straggling_rank, per-rank step_ns and nccl_ns_per_step) is
checked as well.

Usage: recipes_test.py GPUCAP SOURCE_DIR [JOB_DIR]
Exit status: 0 passed, 1 failed, 77 skipped (pandas, dask or distributed
missing, outside CI: under CI=true that is a failure).
"""
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

STEP_SPEC = r"nvtx:ProfilerStep#\d+"

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    return p.stdout


def median_low_high(values):
    s = sorted(values)
    n = len(s)
    if n % 2:
        return s[n // 2]
    return s[n // 2 - 1] + (s[n // 2] - s[n // 2 - 1]) // 2


class Capture:
    """What `gpucap info` and `gpucap stats` say of one capture's windows."""

    def __init__(self, gpucap, path, spec):
        self.path = path
        m = re.search(r"^rank\s+(-?\d+)", run(gpucap, "info", path), re.M)
        self.rank = int(m.group(1)) if m else -1
        base = [gpucap, "stats", path, "-w", spec, "-f", "json", "-q"]
        whole = json.loads(run(*base, "-t", "kernels", "-t", "streams"))
        self.kernels = {k["name"]: k for k in whole["tables"]["kernels"]}
        self.streams = {(s["device"], s["stream"]): s for s in whole["tables"].get("streams", [])}
        trace = json.loads(run(*base, "-r", "cuda_gpu_trace"))["reports"]["cuda_gpu_trace"]
        self.ops = []  # (device, stream, start, end, name, is_kernel)
        for op in trace:
            device = int(re.search(r"\((\d+)\)$", op["Device"]).group(1))
            start, dur = op["Start (ns)"], op["Duration (ns)"]
            self.ops.append((device, op["Strm"], start, start + dur, op["Name"], op["GrdX"] is not None))
        self.windows = []  # per window index: window_ns, nccl from kernels, communication_ns
        for i in range(whole["windows"]):
            w = json.loads(run(*base, "-s", str(i), "-t", "kernels", "-t", "devices"))
            nccl = sum(k["total_ns"] for k in w["tables"]["kernels"] if k["name"].startswith("nccl"))
            comm = sum(d["communication_ns"] for d in w["tables"].get("devices", []))
            self.windows.append({"window_ns": w["window_ns"], "nccl_ns": nccl, "communication_ns": comm})


def gaps_of(ops, min_gap):
    """Per (device, stream): [gaps over min_gap], busy_ns, count, from op
    spans: each op's start against the latest end before it."""
    out = {}
    by_stream = {}
    for device, stream, start, end, *_ in sorted(set(ops)):
        by_stream.setdefault((device, stream), []).append((start, end))
    for key, spans in by_stream.items():
        spans.sort()
        gaps, busy, until = [], 0, None
        for start, end in spans:
            if until is not None and start > until:
                if start - until > min_gap:
                    gaps.append(start - until)
            lo = start if until is None else max(start, until)
            if end > lo:
                busy += end - lo
            until = end if until is None else max(until, end)
        out[key] = (gaps, busy, len(spans))
    return out


def bin_start(d, b):
    """The start of d's bin: the largest ceil(10^(k/b)) <= d (k >= 0), 0 for d < 1."""
    if d < 1:
        return 0
    best = 1
    k = 0
    while True:
        e = math.ceil(10 ** (k / b))
        if e > d:
            return best
        best = e
        k += 1


def frames_equal(a, b, what):
    import pandas as pd
    check(a.keys() == b.keys(), f"{what}: tables {list(a)} vs {list(b)}")
    for name in a:
        try:
            pd.testing.assert_frame_equal(a[name].reset_index(drop=True), b[name].reset_index(drop=True),
                                          check_dtype=False)
        except AssertionError as e:
            check(False, f"{what}: table {name} differs: {e}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    gpucap, source = sys.argv[1], sys.argv[2]
    job = sys.argv[3] if len(sys.argv) > 3 else os.environ.get("GPUCAP_RECIPES_JOB")
    try:
        import pandas  # noqa: F401
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as e:
        why = f"{e} ({sys.executable}): scripts/setup --tests installs python3-pandas, python3-dask, python3-distributed"
        if os.environ.get("CI") == "true":
            print(f"recipes_test: CI=true, where a test that cannot run is a failure: {why}", file=sys.stderr)
            return 1
        print(f"recipes_test: skipped: {why}", file=sys.stderr)
        return 77
    sys.path.insert(0, os.path.join(source, "tools", "recipes"))
    from gpucap_recipes import RECIPES, RecipeError, Runner

    truth = None
    if job:
        paths = sorted(glob.glob(os.path.join(job, "rank-*.gpucap")))
        with open(os.path.join(job, "job.json")) as f:
            truth = json.load(f)
        spec = truth.get("window", STEP_SPEC)
    else:
        paths = [os.path.join(source, "fixtures", f"allreduce-{r}.gpucap") for r in (0, 1)]
        spec = STEP_SPEC
    check(len(paths) >= 2, f"a multi-rank job: {len(paths)} captures")

    with tempfile.TemporaryDirectory(prefix="recipes_test.") as tmp:
        per_rank = []
        for i, p in enumerate(paths):
            out = os.path.join(tmp, f"rank-{i:04d}.sqlite")
            run(gpucap, "export", p, "-w", spec, "-o", out, "-q")
            per_rank.append(out)
        combined = os.path.join(tmp, "all.sqlite")
        run(gpucap, "export", *paths, "-w", spec, "-o", combined, "-q")
        captures = [Capture(gpucap, p, spec) for p in paths]
        ranks = [c.rank for c in captures]
        check(len(set(ranks)) == len(ranks), f"distinct ranks: {ranks}")

        # Each recipe three ways: in-process per rank, in-process on the
        # one database, and on a LocalCluster of 2 worker processes.
        options = {"gpu_gaps": {"min_gap_ns": 0}}
        results = {}
        with Runner("synchronous") as sync:
            for name, fn in RECIPES.items():
                results[name] = fn(per_rank, sync, **options.get(name, {}))
                frames_equal(results[name], fn([combined], sync, **options.get(name, {})),
                             f"{name}: per-rank databases vs one database")
            # Gaps past the median gap (computed here): some are left out.
            every_gap = sorted(x for c in captures for gaps, _, _ in gaps_of(c.ops, 0).values() for x in gaps)
            threshold = every_gap[len(every_gap) // 2] if every_gap else 0
            gaps_thr = RECIPES["gpu_gaps"](per_rank, sync, min_gap_ns=threshold)["streams"]
            hist_b3 = RECIPES["kernel_hist"](per_rank, sync, bins_per_decade=3)
            try:
                RECIPES["nccl_time"](per_rank + [os.path.join(source, "CMakeLists.txt")], sync)
                check(False, "a file that is not a database: no error")
            except RecipeError as e:
                check("CMakeLists.txt" in str(e), f"the error names the file: {e}")
        with Runner(None, workers=2) as cluster:
            check(len(cluster._connect().scheduler_info()["workers"]) == 2, "a LocalCluster of 2 workers")
            for name, fn in RECIPES.items():
                frames_equal(results[name], fn(per_rank, cluster, **options.get(name, {})),
                             f"{name}: synchronous vs LocalCluster")

        # The labels of each capture's windows, by index (the step key).
        import sqlite3
        labels = {}
        for r, db in zip(ranks, per_rank):
            with sqlite3.connect(db) as conn:
                for index, label in conn.execute("SELECT window_index, label FROM windows"):
                    labels[(r, index)] = label or f"window {index}"
        stats_nccl, stats_step = {}, {}
        for c in captures:
            check(len(c.windows) >= 2, f"rank {c.rank}: {len(c.windows)} windows of {spec}")
            for i, w in enumerate(c.windows):
                step = labels[(c.rank, i)]
                check(w["nccl_ns"] == w["communication_ns"],
                      f"stats rank {c.rank} {step}: kernels nccl {w['nccl_ns']} vs communication {w['communication_ns']}")
                stats_nccl[(c.rank, step)] = w["nccl_ns"]
                stats_step[(c.rank, step)] = w["window_ns"]
        steps = sorted({s for _, s in stats_nccl}, key=lambda s: min(i for (r, i), l in labels.items() if l == s))
        check(sum(stats_nccl.values()) > 0, "the job has NCCL time")

        # nccl_time
        t = results["nccl_time"]["nccl_time"]
        got = {(int(r.rank), r.step): (int(r.nccl_ns), int(r.wait_ns)) for r in t.itertuples()}
        least = {s: min(v for (r, st), v in stats_nccl.items() if st == s) for s in steps}
        want = {(r, s): (v, v - least[s]) for (r, s), v in stats_nccl.items()}
        check(got == want, f"nccl_time: {got} vs stats {want}")
        check(list(dict.fromkeys(t["step"])) == steps, f"nccl_time step order {list(dict.fromkeys(t['step']))}")

        # stragglers
        s = results["stragglers"]
        want_steps = {}
        for st in steps:
            by = sorted((v, r) for (r, x), v in stats_nccl.items() if x == st)
            want_steps[st] = (by[0][1], by[1][0] - by[0][0] if len(by) > 1 else None, by[-1][0] - by[0][0])
        got_steps = {row.step: (int(row.straggler_rank), None if row.margin_ns is None or row.margin_ns != row.margin_ns
                                else int(row.margin_ns), int(row.max_wait_ns))
                     for row in s["steps"].astype(object).itertuples()}
        check(got_steps == want_steps, f"stragglers: {got_steps} vs stats {want_steps}")
        counts = {}
        for st, (r, _, _) in want_steps.items():
            counts[r] = counts.get(r, 0) + 1
        most = min(counts, key=lambda r: (-counts[r], r))
        summary = s["summary"].iloc[0]
        check((int(summary.most_often_rank), int(summary.straggling_steps), int(summary.steps)) ==
              (most, counts[most], len(steps)), f"stragglers summary {dict(summary)} vs rank {most} {counts}")

        # gpu_gaps: busy and ops per stream against stats' streams table;
        # the gaps against stats' per-op listing.
        g = results["gpu_gaps"]["streams"]
        got = {(int(r.rank), int(r.device), int(r.stream)): (int(r.ops), int(r.busy_ns)) for r in g.itertuples()}
        want = {(c.rank, d, st): (v["ops"], v["busy_ns"]) for c in captures for (d, st), v in c.streams.items()}
        check(got == want, f"gpu_gaps ops and busy: {got} vs stats streams {want}")
        for min_gap, frame in ((0, g), (threshold, gaps_thr)):
            got = {(int(r.rank), int(r.device), int(r.stream)): (int(r.gaps), int(r.gap_total_ns), int(r.gap_max_ns))
                   for r in frame.itertuples()}
            want = {}
            for c in captures:
                for (d, st), (gaps, busy, n) in gaps_of(c.ops, min_gap).items():
                    want[(c.rank, d, st)] = (len(gaps), sum(gaps), max(gaps, default=0))
                    check(busy == c.streams[(d, st)]["busy_ns"], f"the test's busy vs stats' rank {c.rank} stream {st}")
            check(got == want, f"gpu_gaps over {min_gap} ns: {got} vs from stats' ops {want}")
        kept = sum(x > threshold for x in every_gap)
        check(len(every_gap) > 0 and kept < len(every_gap) and (kept > 0 or every_gap[-1] == threshold),
              f"the threshold {threshold} ns leaves some of {len(every_gap)} gaps out and keeps {kept}")

        # kernel_hist
        for bpd, tables in ((5, results["kernel_hist"]), (3, hist_b3)):
            k = tables["kernels"]
            got = {r.kernel: (int(r.count), int(r.total_ns), int(r.min_ns), int(r.max_ns), int(r.ranks))
                   for r in k.itertuples()}
            want = {}
            for c in captures:
                for name, v in c.kernels.items():
                    a = want.get(name, (0, 0, v["min_ns"], v["max_ns"], 0))
                    want[name] = (a[0] + v["count"], a[1] + v["total_ns"], min(a[2], v["min_ns"]),
                                  max(a[3], v["max_ns"]), a[4] + 1)
            check(got == want, f"kernel_hist kernels: {got} vs stats {want}")
            got = {(r.kernel, int(r.bin_start_ns)): int(r.count) for r in tables["histogram"].itertuples()}
            want = {}
            for c in captures:
                for _, _, start, end, name, is_kernel in c.ops:
                    if is_kernel:
                        key = (name, bin_start(end - start, bpd))
                        want[key] = want.get(key, 0) + 1
            check(got == want, f"kernel_hist bins per decade {bpd}: {got} vs from stats' ops {want}")
            check(all(r.bin_start_ns < r.bin_end_ns for r in tables["histogram"].itertuples()), "bins start before they end")

        # step_time
        st = results["step_time"]
        got = {(int(r.rank), r.step): int(r.step_ns) for r in st["step_ns"].itertuples()}
        check(got == stats_step, f"step_time: {got} vs stats window_ns {stats_step}")
        got = {r.step: (int(r.ranks), int(r.min_ns), int(r.median_ns), int(r.max_ns)) for r in st["steps"].itertuples()}
        want = {}
        for s_ in steps:
            v = [ns for (r, x), ns in stats_step.items() if x == s_]
            want[s_] = (len(v), min(v), median_low_high(v), max(v))
        check(got == want, f"step_time steps: {got} vs stats {want}")

        if truth is not None:
            check_truth(truth, results, ranks)

        # The command line: the same answer as the function, as JSON.
        env = dict(os.environ, PYTHONPATH=os.path.join(source, "tools", "recipes"))
        for extra in (["--scheduler", "synchronous"], ["--workers", "2"]):
            out = run(sys.executable, "-m", "gpucap_recipes", "stragglers", *per_rank, "--format", "json", *extra, env=env)
            doc = json.loads(out)
            check(doc["summary"][0]["most_often_rank"] == most and len(doc["steps"]) == len(steps),
                  f"the command line {extra}: {doc['summary']}")
        p = subprocess.run([sys.executable, "-m", "gpucap_recipes", "step_time", os.path.join(tmp, "missing.sqlite"),
                            "--scheduler", "synchronous"], env=env, capture_output=True, text=True)
        check(p.returncode == 1 and "missing.sqlite" in p.stderr, f"a missing database: exit {p.returncode}, {p.stderr!r}")

    if failures:
        print(f"recipes_test: {len(failures)} failure(s)", file=sys.stderr)
        return 1
    print(f"recipes_test: {len(RECIPES)} recipes on {len(paths)} ranks, {len(steps)} steps: "
          "equal to gpucap stats, in-process and on a LocalCluster of 2 workers")
    return 0


def check_truth(truth, results, ranks):
    """The synthetic job's truth (job.json) against the recipes."""
    steps = results["stragglers"]["steps"]
    if "slow_rank" in truth:
        got = int(results["stragglers"]["summary"].iloc[0].most_often_rank)
        check(got == truth["slow_rank"], f"job.json slow_rank {truth['slow_rank']}: most often {got}")
    if "straggling_step" in truth and "straggling_rank" in truth:
        st = truth["straggling_step"]
        row = steps[steps["step"] == st] if isinstance(st, str) else steps.iloc[[st]]
        check(len(row) == 1 and int(row.iloc[0].straggler_rank) == truth["straggling_rank"],
              f"job.json straggling_step {st}: straggler {row.to_dict('records')}, want {truth['straggling_rank']}")
    per_rank = truth.get("ranks")
    if isinstance(per_rank, list):
        tol = truth.get("tolerance_ns", 0)
        nccl = results["nccl_time"]["nccl_time"]
        step_ns = results["step_time"]["step_ns"]
        for r in per_rank:
            rank = r.get("rank")
            if "nccl_ns_per_step" in r:
                got = list(nccl[nccl["rank"] == rank]["nccl_ns"])
                want = r["nccl_ns_per_step"]
                check(len(got) == len(want) and all(abs(a - b) <= tol for a, b in zip(got, want)),
                      f"job.json rank {rank} nccl_ns_per_step {want}: {got}")
            if "step_ns" in r:
                got = list(step_ns[step_ns["rank"] == rank]["step_ns"])
                want = r["step_ns"] if isinstance(r["step_ns"], list) else [r["step_ns"]] * len(got)
                check(len(got) == len(want) and all(abs(a - b) <= tol for a, b in zip(got, want)),
                      f"job.json rank {rank} step_ns {want}: {got}")


if __name__ == "__main__":
    sys.exit(main())
