#!/usr/bin/env python3
"""Checks the flight recorder's crash fixture (ring_crash_job.py, issue 46)
on the GPU machine: the dump the crash handler wrote names the signal, reads
as a clean capture, and its last steps before the crash are complete: each
step's range is there, every GPU op launched in it has its launch (an ac2g
flow from the launching API call), no flow is an orphan, and the steps'
kernel multisets are equal (the job runs the same step each time).

  check_ring_crash.py DUMP MANIFEST GPUCAP [WORKDIR]"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict


def main(dump, manifest_path, gpucap, work):
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    manifest = json.load(open(manifest_path))
    info = json.loads(subprocess.run([gpucap, "info", "--json", dump], check=True, capture_output=True,
                                     text=True).stdout)
    text = json.dumps(info)
    check(f'"trigger": "{manifest["trigger"]}"' in text, f"the dump's trigger is {manifest['trigger']}")
    check('"clean": true' in text, "the dump reads clean")

    trace = os.path.join(work, "ring_crash.json")
    subprocess.run([gpucap, "build", dump, "-o", trace], check=True)
    ev = json.load(open(trace))["traceEvents"]

    pattern = re.compile("^" + manifest["step_pattern"] + "$")
    steps = {}  # step number -> (tid, start, end)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "user_annotation":
            m = pattern.match(e["name"])
            if m:
                steps[int(m.group(1))] = (e["tid"], e["ts"], e["ts"] + e["dur"])
    print(f"steps in the dump: {sorted(steps)[:3]} .. {sorted(steps)[-3:]}" if steps else "no steps in the dump")

    launches = {}  # correlation -> (tid, ts) of the API call
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]] = (e["tid"], e["ts"])
    gpu_cats = ("kernel", "gpu_memcpy", "gpu_memset")
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") in gpu_cats]
    starts = Counter(e["id"] for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g")
    finishes = Counter(e["id"] for e in ev if e.get("ph") == "f" and e.get("cat") == "ac2g")
    check(starts == finishes, f"no orphan flow ({sum(starts.values())} starts, {sum(finishes.values())} finishes)")

    per_step = defaultdict(Counter)
    without_launch = defaultdict(int)
    for op in ops:
        corr = op["args"].get("correlation")
        launch = launches.get(corr)
        if launch is None:
            continue  # an op whose launch aged out with the oldest frames: at the span's start only
        tid, ts = launch
        for n, (stid, s, t) in steps.items():
            if stid == tid and s <= ts <= t:
                per_step[n][op["name"]] += 1
                break
    for op in ops:
        if op["args"].get("correlation") not in launches:
            without_launch["ops"] += 1

    last = manifest["steps"] - 1
    wanted = list(range(last - manifest["check_last"] + 1, last + 1))
    for n in wanted:
        check(n in steps, f"step#{n} (of the last {len(wanted)} before the crash) is in the dump")
    present = [n for n in wanted if n in steps]
    for n in present:
        check(sum(per_step[n].values()) > 0, f"step#{n} has GPU ops ({sum(per_step[n].values())})")
    # Every op launched in a checked step is drawn with its launch: the
    # builder's flow starts sit on launches, so count ops by flows too.
    # Two steps without ops are not equal steps: 0 = 0 says the dump holds
    # no GPU work (CUPTI's buffers never reached the ring), not a match.
    if present:
        first = per_step[present[0]]
        for n in present[1:]:
            check(per_step[n] == first and sum(first.values()) > 0,
                  f"step#{n}'s kernels equal step#{present[0]}'s ({sum(per_step[n].values())} ops, "
                  f"{sum(first.values())} in step#{present[0]})")
    if without_launch["ops"]:
        # Allowed only before the checked steps (the ring's oldest edge).
        first_checked = min(steps[n][1] for n in present) if present else float("inf")
        late = [op for op in ops if op["args"].get("correlation") not in launches and op["ts"] >= first_checked]
        check(not late, f"no GPU op without its launch in the checked steps ({len(late)} found; "
                        f"{without_launch['ops']} in all, at the span's start)")
    print("FAILED: " + "; ".join(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) < 4:
        print(__doc__)
        sys.exit(2)
    work = sys.argv[4] if len(sys.argv) > 4 else tempfile.mkdtemp(prefix="ring_crash.")
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], work))
