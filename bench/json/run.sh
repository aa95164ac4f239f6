#!/usr/bin/env bash
# The torch.profiler trace reader, gpucap's span scanner (tools/json) against
# simdjson's On-Demand API, on the Kineto fixtures' events repeated:
#   bench/json/run.sh [MB_FOR_WALL (64)] [ROUNDS (3)]
# Instructions (callgrind, one read of a ~6 MB trace, less the run's setup
# counted with zero reads) and wall time (ROUNDS reads of an MB_FOR_WALL
# trace, the two ways alternated twice). Needs g++, valgrind, libsimdjson-dev.
set -euo pipefail
cd "$(dirname "$0")/../.."
mb=${1:-64}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++20 -I tools/json/include -I format/include bench/json/scan_bench.cc tools/json/src/json_scan.cc \
  format/src/status.cc -lsimdjson -o "$work/scan_bench"
python3 bench/json/make_trace.py "$work/small.json" 4
python3 bench/json/make_trace.py "$work/big.json" "$mb"
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$work/scan_bench" "$work/small.json" "$1" "$2" \
    2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
base=$(ir 0 hand)
hand=$(( $(ir 1 hand) - base ))
simd=$(( $(ir 1 simdjson) - base ))
echo "instructions for one read: hand $hand, simdjson $simd, ratio $(python3 -c "print(f'{$hand/$simd:.2f}')")"
for _ in 1 2; do
  "$work/scan_bench" "$work/big.json" "$rounds" hand
  "$work/scan_bench" "$work/big.json" "$rounds" simdjson
done
