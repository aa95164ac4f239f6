#!/usr/bin/env bash
# Many ranks on one machine: time and peak RSS of gpucap report, stats
# (rank tables), export (one database) and merge (one step, pftrace) over
# synthetic jobs of N ranks (build_bench job), each command run once per
# size. From a clean checkout, after `cmake --build build`:
#
#   bench/ranks/scale.sh [--ranks "64 256 1024"] [--steps 8] [--kernels-per-step 40] [--threads 0] [--dir /tmp/gpucap-ranks]
#
# Prints one line per command and size: ranks, command, wall s, CPU s,
# peak RSS MB, output bytes. The jobs are kept in --dir (made again when
# their flags change).
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks="64 256 1024" steps=8 kernels=40 threads=0 dir=/tmp/gpucap-ranks
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks="$2"; shift 2 ;;
    --steps) steps="$2"; shift 2 ;;
    --kernels-per-step) kernels="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    *) echo "scale.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
gpucap=build/tools/gpucap bench=build/bench/build/build_bench
for f in "$gpucap" "$bench"; do [ -x "$f" ] || { echo "scale.sh: $f not built (cmake --build build)" >&2; exit 2; }; done
mkdir -p "$dir"
printf '%-6s %-8s %8s %8s %9s %12s\n' ranks command wall_s cpu_s peak_mb out_bytes
for n in $ranks; do
  job="$dir/job-$n-$steps-$kernels"
  if [ ! -f "$job/job.json" ]; then
    rm -rf "$job"
    "$bench" job "$job" --ranks "$n" --steps "$steps" --kernels-per-step "$kernels" >/dev/null
  fi
  out="$dir/out-$n"
  rm -rf "$out" && mkdir -p "$out"
  run() {  # name, output file, command...
    local name="$1" file="$2"; shift 2
    /usr/bin/time -f '%e %U %S %M' -o "$out/time" "$@" >/dev/null 2>"$out/stderr" ||
      { echo "scale.sh: $name failed:" >&2; cat "$out/stderr" >&2; exit 1; }
    read -r wall user sys rss < "$out/time"
    printf '%-6s %-8s %8.2f %8.2f %9.1f %12s\n' "$n" "$name" "$wall" "$(echo "$user + $sys" | bc)" \
      "$(echo "scale=1; $rss / 1024" | bc)" "$(cat $file 2>/dev/null | wc -c)"
  }
  captures=("$job"/rank-*.gpucap)
  run report "$out/report.html" "$gpucap" report -q -j "$threads" -o "$out/report.html" "${captures[@]}"
  run stats "$out/stats.txt" "$gpucap" stats -q -j "$threads" -w 'nvtx:ProfilerStep#\d+' -o "$out/stats.txt" "${captures[@]}"
  run export "$out/job.sqlite" "$gpucap" export -q -w 'nvtx:ProfilerStep#\d+' -o "$out/job.sqlite" "${captures[@]}"
  run merge "$out/step.*pftrace" "$gpucap" merge -q -j "$threads" -w 'nvtx:ProfilerStep#\d+' -s 1 -o "$out/step.pftrace" "${captures[@]}"
done
