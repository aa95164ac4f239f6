#!/bin/bash
# Instructions the entry gate adds to one driver call, counted by callgrind
# on this CPU: gate_call_cost (gate_call_cost.cc) run N times through the
# stub and N times directly; the difference over N is the price per call,
# of the stub's fast path and of its full path (gate_call_cost's modes).
#   bench/gate/call_cost.sh [BUILD_DIR] [N]
# BEFORE=<git revision>: also builds the probe against that revision's gate
# (recorder/src's entry_gate.cc, driver_wrap.cc, driver_wrap_x86_64.S, with
# the flags of a Release build) and counts it in the same run.
# VALGRIND (default: valgrind on PATH) names the valgrind to run.
set -euo pipefail
build=${1:-build}
n=${2:-1000000}
vg=${VALGRIND:-valgrind}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# callgrind's total ("Collected : N") for one probe and mode; the probe's
# own line kept for the end.
count() {
  "$vg" --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$n" 2>"$tmp/vg" >>"$tmp/lines"
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/vg"
}
per_call() { awk -v a="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%+.2f", (b - a) / n }'; }

if [ -n "${BEFORE:-}" ]; then
  mkdir -p "$tmp/src"
  for f in entry_gate.h entry_gate.cc driver_wrap.h driver_wrap.cc driver_wrap_x86_64.S; do
    git -C "$here" show "$BEFORE:recorder/src/$f" >"$tmp/src/$f"
  done
  # Headers the revision's sources include that it may not have had.
  for f in driver_wrap_abi.h saved_arguments_x86_64.h gate_api.h; do
    git -C "$here" show "$BEFORE:recorder/src/$f" >"$tmp/src/$f" 2>/dev/null || rm -f "$tmp/src/$f"
  done
  flags=(-I"$tmp/src" -O3 -DNDEBUG -std=c++20)
  c++ "${flags[@]}" -fPIC -fvisibility=hidden -c "$tmp/src/entry_gate.cc" -o "$tmp/eg.o"
  c++ "${flags[@]}" -fPIC -fvisibility=hidden -c "$tmp/src/driver_wrap.cc" -o "$tmp/dw.o"
  cc -I"$tmp/src" -c "$tmp/src/driver_wrap_x86_64.S" -o "$tmp/tr.o"
  c++ "${flags[@]}" -fPIE "$here/gate_call_cost.cc" "$tmp/eg.o" "$tmp/dw.o" "$tmp/tr.o" -o "$tmp/before"
  b_direct=$(count "$tmp/before" direct)
  b_stub=$(count "$tmp/before" stub)
fi
probe=$build/bench/gate/gate_call_cost
direct=$(count "$probe" direct)
stub=$(count "$probe" stub)
full=$(count "$probe" full)
cat "$tmp/lines"
echo "instructions a call through the stub, over a direct call (N=$n):"
if [ -n "${BEFORE:-}" ]; then
  echo "  before ($BEFORE): $(per_call "$b_direct" "$b_stub")"
fi
echo "  fast path: $(per_call "$direct" "$stub")"
echo "  full path: $(per_call "$direct" "$full")"
