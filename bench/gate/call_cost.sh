#!/bin/sh
# Instructions the entry gate adds to one driver call, counted by callgrind
# on this CPU: gate_call_cost (gate_call_cost.cc) run N times through the
# stub and N times directly; the difference over N is the price per call,
# of the stub's fast path and of its full path (gate_call_cost's modes).
#   bench/gate/call_cost.sh [BUILD_DIR] [N]
# VALGRIND (default: valgrind on PATH) names the valgrind to run.
set -eu
build=${1:-build}
n=${2:-1000000}
probe=$build/bench/gate/gate_call_cost
vg=${VALGRIND:-valgrind}
count() {
  # callgrind's total ("Collected : N") for one mode; the probe's line kept for the end.
  "$vg" --tool=callgrind --callgrind-out-file=/dev/null "$probe" "$1" "$n" 2>"$tmp" >"$tmp.out"
  cat "$tmp.out" >>"$tmp.lines"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp"
}
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.out" "$tmp.lines"' EXIT
direct=$(count direct)
stub=$(count stub)
full=$(count full)
cat "$tmp.lines"
awk -v n="$n" -v d="$direct" -v s="$stub" -v f="$full" 'BEGIN {
  printf "instructions: direct %d, through the stub %d, its full path %d (N=%d)\n", d, s, f, n
  printf "per call, the gate: +%.2f (fast path), +%.2f (full path)\n", (s - d) / n, (f - d) / n
}'
