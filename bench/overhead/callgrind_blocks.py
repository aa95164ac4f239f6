#!/usr/bin/env python3
"""Instructions retired, read from callgrind's dumps (instr.sh).

    callgrind_blocks.py run DIR VARIANT RUN PER
        One run's dumps (DIR/cg.*, written with --separate-threads=yes
        --compress-strings=no --compress-pos=no --dump-instr=no): prints one
        INSTR line per region the workload marked (callgrind_mark.h: only the
        launching thread's counts), in instructions per launch (PER launches
        or iterations a region, unless its label ends in its own count), with
        the region's instructions per shared object; a FUNCS line per kind of
        region (its second region, or its only one) with the functions that
        retired the most instructions in it, and a FUNCSMAX line for its
        costliest region (where a sampled step or a switch landed); and one
        THREADS line with every
        thread's instructions from the start of the counting to the program's
        end, per launch counted.

    callgrind_blocks.py table FILE [BASE]
        The INSTR lines of FILE (every variant, every run) as a table: per
        variant and region kind, the median over its regions of instructions
        per launch, their range, the difference from BASE (default base, or base+...)
        in instructions and in per cent, split by shared object, and the
        mean over regions against BASE's mean (what a price averaged over a
        job is, where a few regions hold a sampled step: `--sample N`).
"""
import collections
import glob
import os
import re
import statistics
import sys


def parse_dump(path):
    """(trigger, thread, {object: self instructions}, {object:function: self
    instructions}, totals) of one dump; objects by short_object's name."""
    trigger, thread, totals = "", 0, None
    objects, functions = collections.Counter(), collections.Counter()
    obj, fn, after_call = "?", "?", False
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("desc: Trigger: "):
                trigger = line[len("desc: Trigger: "):].strip()
            elif line.startswith("thread: "):
                thread = int(line.split()[1])
            elif line.startswith("totals: "):
                totals = int(line.split()[1])
            elif line.startswith("ob="):
                obj = short_object(os.path.basename(line[3:].strip()) or "?")
            elif line.startswith("fn="):
                fn = line[3:].strip() or "?"
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
            elif line[:1].isdigit() or line[:1] in "+-*":
                parts = line.split()
                if len(parts) >= 2:
                    if after_call:
                        after_call = False
                    else:
                        objects[obj] += int(parts[1])
                        functions[obj + ":" + fn] += int(parts[1])
    return trigger, thread, objects, functions, totals


def short_object(name):
    """libcuda.so.580.95.05 -> libcuda; the workload's own binary stays as it is."""
    m = re.match(r"(lib[A-Za-z0-9_+-]+?)(?:[.-]\d.*)?\.so.*", name)
    return m.group(1) if m else name


def top_functions(functions, count, n):
    """The n functions that retired the most, per launch, as name=instructions,..."""
    return ",".join(f"{name.replace(',', ';').replace(' ', '_')}={v / count:.1f}"
                    for name, v in functions.most_common(n))


def run(directory, variant, run_id, per):
    regions, threads = [], collections.Counter()
    for path in sorted(glob.glob(os.path.join(directory, "cg.*"))):
        trigger, thread, objects, functions, totals = parse_dump(path)
        if totals is None:
            continue
        counted = sum(objects.values())
        if counted != totals:
            print(f"callgrind_blocks: {path}: objects sum to {counted}, totals say {totals}", file=sys.stderr)
        if trigger.startswith("Client Request: block "):
            label = trigger[len("Client Request: block "):].split()
            count = int(label[3]) if len(label) > 3 else per
            regions.append((label, count, totals, objects, functions))
        elif trigger == "Program termination":
            threads[thread] += totals
    launches = sum(count for _, count, _, _, _ in regions)
    shown = collections.Counter()
    costliest = {}  # (kind, state) -> the region with the most instructions per launch
    for region in regions:
        label, count, totals = region[0], region[1], region[2]
        key = (label[0], label[1])
        if key not in costliest or totals / count > costliest[key][2] / costliest[key][1]:
            costliest[key] = region
    for label, count, totals, by_object, functions in regions:
        kind, state, block = label[0], label[1], label[2]
        objs = ",".join(f"{k}={v / count:.1f}" for k, v in sorted(by_object.items()) if v)
        print(f"INSTR variant={variant} run={run_id} kind={kind} state={state} block={block} "
              f"per_launch={totals / count:.2f} objects={objs}")
        shown[(kind, state)] += 1
        if shown[(kind, state)] == 2 or (block == "0" and sum(1 for r in regions if r[0][:2] == label[:2]) == 1):
            print(f"FUNCS variant={variant} run={run_id} kind={kind} state={state} block={block} "
                  f"{top_functions(functions, count, 16)}")
    for (kind, state), (label, count, totals, _, functions) in sorted(costliest.items()):
        print(f"FUNCSMAX variant={variant} run={run_id} kind={kind} state={state} block={label[2]} "
              f"per_launch={totals / count:.2f} {top_functions(functions, count, 24)}")
    if launches:
        per_thread = ",".join(f"{t}={n / launches:.2f}" for t, n in sorted(threads.items()))
        print(f"THREADS variant={variant} run={run_id} launches={launches} "
              f"others_per_launch={sum(n for t, n in threads.items() if t != 1) / launches:.2f} "
              f"threads={per_thread}")


def table(path, base):
    rows = collections.defaultdict(list)  # (variant, kind, state) -> [(per_launch, objects)]
    others = collections.defaultdict(list)
    for line in open(path):
        if line.startswith("THREADS "):
            f = dict(kv.split("=", 1) for kv in line.split()[1:])
            others[f["variant"]].append(float(f["others_per_launch"]))
        if not line.startswith("INSTR "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        objs = {k: float(v) for k, v in (kv.split("=") for kv in f["objects"].split(",") if kv)}
        rows[(f["variant"], f["kind"], f["state"])].append((float(f["per_launch"]), objs))
    kinds = sorted({(k, s) for _, k, s in rows})
    for kind, state in kinds:
        ref_name = base
        if ref_name is None:  # `base`, or else the first variant made of it (base+RANGES=steps)
            names = sorted(v for v, k, s in rows if (k, s) == (kind, state))
            ref_name = "base" if "base" in names else next((v for v in names if v.startswith("base+")), "base")
        ref = rows.get((ref_name, kind, state))
        ref_med = statistics.median(v for v, _ in ref) if ref else None
        ref_mean = statistics.mean(v for v, _ in ref) if ref else None
        ref_objs = median_objects(ref) if ref else {}
        print(f"\n{kind} ({state}): instructions per launch on the launching thread, median of regions")
        print("| variant | regions | median | range | vs base | vs base, % | where the difference is (per launch) "
              "| mean | mean vs base, % | other threads, per launch |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for (variant, k, s), values in sorted(rows.items(), key=lambda kv: statistics.median(v for v, _ in kv[1])):
            if (k, s) != (kind, state):
                continue
            xs = [v for v, _ in values]
            med = statistics.median(xs)
            diff = pct = where = mean_pct = ""
            mean = statistics.mean(xs)
            if ref_mean:
                mean_pct = f"{(mean / ref_mean - 1) * 100:+.2f}%"
            if ref_med is not None:
                diff = f"{med - ref_med:+.1f}"
                pct = f"{(med / ref_med - 1) * 100:+.2f}%"
                objs = median_objects(values)
                deltas = {o: objs.get(o, 0) - ref_objs.get(o, 0) for o in set(objs) | set(ref_objs)}
                where = ", ".join(f"{o} {d:+.0f}" for o, d in sorted(deltas.items(), key=lambda kv: -abs(kv[1]))
                                  if abs(d) >= 0.5)
            oth = f"{statistics.median(others[variant]):.1f}" if others.get(variant) else ""
            print(f"| {variant} | {len(xs)} | {med:.1f} | {min(xs):.1f}-{max(xs):.1f} | {diff} | {pct} | {where} "
                  f"| {mean:.1f} | {mean_pct} | {oth} |")


def median_objects(values):
    names = set().union(*(o.keys() for _, o in values))
    return {n: statistics.median(o.get(n, 0.0) for _, o in values) for n in names}


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        sys.exit(__doc__)
