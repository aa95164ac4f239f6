#!/usr/bin/env bash
# The torch.profiler trace reader as shipped (KinetoTrace::Read, what
# `gpucap build --into` reads the profiler's trace with), in two gpucap
# binaries side by side, on the Kineto fixtures' events repeated
# (make_trace.py):
#   bench/json/run.sh OLD_GPUCAP NEW_GPUCAP [MB_FOR_WALL (64)] [ROUNDS (3)]
# Instructions: callgrind collecting only inside KinetoTrace::Read (the file
# read and the parse), one splice into a ~6 MB trace; skipped when valgrind
# is absent. Wall and peak memory: the whole `gpucap build --into` into an
# MB_FOR_WALL trace, ROUNDS runs each, the two binaries alternated. The
# capture is fixtures/kineto/eager_train.gpucap; the window is the trace's
# span, which holds none of its GPU work, so the run is the read, the copy
# through and the write.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,13p' "$0"; exit 2; }
old=$(realpath "$1")
new=$(realpath "$2")
mb=${3:-64}
rounds=${4:-3}
cd "$(dirname "$0")/../.."
capture=fixtures/kineto/eager_train.gpucap
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/json/make_trace.py "$work/small.json" 4
python3 bench/json/make_trace.py "$work/big.json" "$mb"
if command -v valgrind >/dev/null; then
  ir() {
    valgrind --tool=callgrind --toggle-collect='gpucap::tools::KinetoTrace::Read*' \
      --callgrind-out-file="$work/cg.out" "$1" build "$capture" --into "$work/small.json" -q -o "$work/out.json" 2>&1 |
      sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
  }
  a=$(ir "$old")
  b=$(ir "$new")
  echo "instructions in KinetoTrace::Read, $(stat -c %s "$work/small.json") bytes: old $a, new $b," \
    "ratio $(python3 -c "print(f'{$a/$b:.2f}')")"
else
  echo "valgrind not found: no instruction counts"
fi
for r in $(seq "$rounds"); do
  for which in old new; do
    bin=${!which}
    /usr/bin/time -f "$which: %e s wall, %U s user, %S s system, %M KiB peak" \
      "$bin" build "$capture" --into "$work/big.json" -q -o "$work/out.json" 2>&1 | tail -1
  done
done
echo "trace: $(stat -c %s "$work/big.json") bytes"
