#!/bin/bash
# The pftrace size table of bench/README.md ("pftrace size"): JSON.gz against
# pftrace.gz of the same windows, for every fixture (the `all` window, and
# the nvtx step windows of those that have steps) and the synthetic bench
# capture (`every:1s`), both built with the default gzip codec and level.
# Prints a markdown table; several windows are summed.
#
#   bench/build/pftrace_ratio.sh BUILD_DIR [KERNELS]     e.g. build 5000000 (0: no bench capture)
set -euo pipefail
build=$(realpath "${1:?usage: pftrace_ratio.sh BUILD_DIR [KERNELS]}")
kernels=${2:-5000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sum() { cat "$@" 2>/dev/null | wc -c; }
row() {  # name window json_bytes pftrace_bytes
  awk -v n="$1" -v w="$2" -v j="$3" -v p="$4" 'BEGIN { printf "| %s | `%s` | %d | %d | %.3f |\n", n, w, j, p, p / j }'
}
one() {  # capture name window
  rm -rf "$tmp/o"; mkdir -p "$tmp/o"
  "$build/tools/gpucap" build "$1" -o "$tmp/o/t.json.gz" -w "$3" -q -j1
  "$build/tools/gpucap" build "$1" -o "$tmp/o/t.pftrace.gz" -w "$3" -q -j1
  row "$2" "$3" "$(sum "$tmp"/o/t*.json.gz)" "$(sum "$tmp"/o/t*.pftrace.gz)"
}

echo "| capture | window | JSON.gz bytes | pftrace.gz bytes | pftrace / JSON |"
echo "|---|---|---|---|---|"
for f in "$root"/fixtures/*.gpucap; do
  n=$(basename "$f" .gpucap)
  one "$f" "$n" all
  case $n in
    torch_train | allreduce-0 | allreduce-1) one "$f" "$n" 'nvtx:ProfilerStep#\d+' ;;
  esac
done
if [ "$kernels" != 0 ]; then
  "$build/bench/build/build_bench" make "$tmp/bench.gpucap" --kernels "$kernels" > /dev/null
  rm -rf "$tmp/o"; mkdir -p "$tmp/o"
  "$build/bench/build/build_bench" build "$tmp/bench.gpucap" "$tmp/o/t.json.gz" --window every:1s > /dev/null
  "$build/bench/build/build_bench" build "$tmp/bench.gpucap" "$tmp/o/t.pftrace.gz" --window every:1s > /dev/null
  row "build_bench make --kernels $kernels" every:1s "$(sum "$tmp"/o/t*.json.gz)" "$(sum "$tmp"/o/t*.pftrace.gz)"
fi
