#!/bin/bash
# Two build_bench binaries side by side on one capture, interleaved run by run
# so that the machine's drift (20-30% on the shared development VM) hits both
# alike. Prints one line per run: which, window, events/s per CPU-second,
# events/s wall, gzip MB, peak RSS MB.
#
#   bench/build/compare.sh OLD_BUILD_BENCH NEW_BUILD_BENCH CAPTURE RUNS WINDOW [OUT_DIR] [build_bench options...]
#
# OLD_BUILD_BENCH can be a build of an earlier commit, e.g.
#   git worktree add /tmp/old <commit> && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release -DGPUCAP_BUILD_TESTS=OFF && cmake --build /tmp/old/build --target build_bench
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$1 new=$2 capture=$3 runs=$4 window=$5
out=${6:-/tmp/gpucap-compare}
shift $(( $# >= 6 ? 6 : 5 ))
mkdir -p "$out/old" "$out/new"
for _ in $(seq "$runs"); do
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    r=$("$bin" build "$capture" "$out/$which/t.json.gz" --window "$window" "$@" 2>&1)
    cpu=$(grep -o '[0-9.]* M events/s per cpu-second' <<<"$r" | cut -d' ' -f1)
    wall=$(grep -o '[0-9.]* M events/s wall' <<<"$r" | cut -d' ' -f1)
    gz=$(grep -o 'gzip [0-9.]* MB' <<<"$r" | cut -d' ' -f2)
    rss=$(grep -o 'peak RSS [0-9]* MB' <<<"$r" | cut -d' ' -f3)
    echo "$which $window cpu:${cpu}M wall:${wall}M gzip:${gz}MB rss:${rss}MB"
  done
done
