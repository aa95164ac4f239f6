#!/usr/bin/env bash
# emit_nvtx_job.py in ROUNDS rounds whose order rotates: base (the steps'
# ranges only, no tool), emit (every operator a range, emit_nvtx with
# record_shapes, no tool), emit_old and emit_new (the same under
# `gpucap record` of OLD and NEW). The job runs on CPUS (default 2-9).
#
#   bench/overhead/emit_nvtx_rounds.sh OUT ROUNDS [VARIANT...]
#
# Environment: NEW, OLD (gpucap dists), CPUS, STEPS, WARMUP, RANGES_PER_STEP, END (seconds
# after which no new round starts). Round 0's captures are kept in OUT
# (OUT/emit_old-0.gpucap, OUT/emit_new-0.gpucap) for a comparison of their
# traces; later rounds' are removed. Prints a ROUND line per run and the
# summary: median seconds per variant, and the increments over emit alone,
# paired by round, per range (the range count read from round 0's capture),
# for the whole timed stretch and, with STEP_SYNC=1, for the median step.
# toggle_old and toggle_new run the job under OLD's and NEW's recorder with
# TOGGLE_BLOCKS (default 20) blocks, recorded and paused in turn in one
# process: their `inc` is the recorder's increment per step measured inside
# one process, which the summary gives per variant and per range.
set -uo pipefail
out="$1"; rounds="$2"; shift 2
variants=("$@")
((${#variants[@]})) || variants=(base emit emit_old emit_new)
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
t0=$SECONDS
: >"$out/rounds.txt"
n=${#variants[@]}
for ((r = 0; r < rounds; r++)); do
  if [[ -n ${END:-} ]] && ((SECONDS - t0 > END)); then break; fi
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + r) % n))]}
    emit=1 pre=()
    case "$v" in
      base) emit=0 ;;
      emit) ;;
      emit_old) pre=("$OLD/bin/gpucap" record -q -o "$out/$v-$r.gpucap" --) ;;
      emit_new) pre=("$NEW/bin/gpucap" record -q -o "$out/$v-$r.gpucap" --) ;;
      toggle_old) pre=(env TOGGLE_BLOCKS="${TOGGLE_BLOCKS:-20}" "$OLD/bin/gpucap" record -q -o "$out/$v-$r.gpucap" --) ;;
      toggle_new) pre=(env TOGGLE_BLOCKS="${TOGGLE_BLOCKS:-20}" "$NEW/bin/gpucap" record -q -o "$out/$v-$r.gpucap" --) ;;
      *) echo "emit_nvtx_rounds.sh: unknown variant $v" >&2; exit 2 ;;
    esac
    line=$(EMIT=$emit taskset -c "${CPUS:-2-9}" "${pre[@]}" python3 "$here/emit_nvtx_job.py" 2>"$out/$v-$r.err" |
           grep '^RESULT')
    [[ -n $line ]] || { echo "FAILED variant=$v round=$r"; tail -c 1500 "$out/$v-$r.err"; }
    echo "ROUND variant=$v round=$r ${line#RESULT }" | tee -a "$out/rounds.txt"
    ((r > 0)) && rm -f "$out/$v-$r.gpucap"
  done
done
ranges=""
if [[ -e $out/emit_new-0.gpucap ]]; then
  ranges=$("$NEW/bin/gpucap" info "$out/emit_new-0.gpucap" | awk '$1 == "ranges" {print $2}')
fi
python3 - "$out/rounds.txt" "${ranges:-0}" "${WARMUP:-5}" "${STEPS:-30}" <<'PY'
import collections, statistics, sys
path, events, warmup, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def report(key):
    s = collections.defaultdict(dict)
    for line in open(path):
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        if key in f:
            s[f["variant"]][f["round"]] = float(f[key])
    if not s:
        return
    print(f"-- {key}: " + ("seconds for the timed steps" if key == "s" else "the median step's seconds x steps"))
    for v, rs in s.items():
        xs = sorted(rs.values())
        print(f"{v}: median {statistics.median(xs):.4f} s over {len(xs)} rounds ({xs[0]:.4f}-{xs[-1]:.4f})")
    def inc(a, b):
        return [s[a][r] - s[b][r] for r in s[a] if r in s.get(b, {})]
    for a, b in (("emit", "base"), ("emit_old", "emit"), ("emit_new", "emit"), ("emit_old", "emit_new")):
        d = inc(a, b)
        if not d:
            continue
        med = statistics.median(d)
        per = f", {med / (per_step * steps) * 1e9:.0f} ns per range" if per_step and b == "emit" else ""
        print(f"{a} - {b}: median {med * 1e3:+.1f} ms per {steps} steps, rounds {min(d) * 1e3:+.1f}..{max(d) * 1e3:+.1f}{per}")
    if inc("emit_old", "emit") and inc("emit_new", "emit"):
        o, n = statistics.median(inc("emit_old", "emit")), statistics.median(inc("emit_new", "emit"))
        print(f"gpucap's increment over emit_nvtx alone, new / old: {n / o:.3f}" if o else "")
        e = statistics.median(s["emit"].values())
        print(f"emit_old / emit: {statistics.median(s['emit_old'].values()) / e:.3f}, "
              f"emit_new / emit: {statistics.median(s['emit_new'].values()) / e:.3f}")
# Range events of the whole job (warm-up steps too) -> ranges in the timed steps.
per_step = events / 2 / (warmup + steps) if events else 0
import os
per_step = float(os.environ.get("RANGES_PER_STEP") or per_step)  # when no emit_new round 0 was run
print(f"ranges per step (round 0's capture, events/2/steps): {per_step:.0f}")
report("s")
report("med")
inc = collections.defaultdict(list)
for line in open(path):
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    if "inc" in f:
        inc[f["variant"]].append(float(f["inc"]))
for v, xs in sorted(inc.items()):
    xs.sort()
    per = f", {statistics.median(xs) / per_step * 1e9:.0f} ns per range" if per_step else ""
    print(f"{v}: recorded minus paused, per step: median {statistics.median(xs) * 1e3:+.3f} ms over {len(xs)} "
          f"processes ({xs[0] * 1e3:+.3f}..{xs[-1] * 1e3:+.3f}){per}")
if inc.get("toggle_old") and inc.get("toggle_new"):
    print(f"toggle_new / toggle_old: {statistics.median(inc['toggle_new']) / statistics.median(inc['toggle_old']):.3f}")
PY
