#!/usr/bin/env bash
# `gpucap build` at several thread counts on one synthetic capture: wall,
# CPU and peak RSS of each build (/usr/bin/time), the per-phase report of the
# largest thread count (GPUCAP_BUILD_TIMES=1: per window decode / join /
# render / close, builder/include/gpucap/builder/build_times.h), and whether
# every thread count and every binary wrote the same trace (md5 of the
# decompressed files). With two binaries (main before and after a change)
# the builds alternate within each round, so a drift of the machine lands on
# both. It replaces the session scripts s9/s11/s12_scale.sh (git history).
#
#   bench/build/scale.sh OUT [GPUCAP ...]      GPUCAP default: build/tools/gpucap
#
# Environment (defaults in brackets):
#   KERNELS   kernels in the capture build_bench makes [5000000: 20M events, ~16 M rows]
#   THREADS   thread counts [1 2 4 8 16]        ROUNDS   rounds of every build [1]
#   WINDOWS   window specs [every:1s all]       FORMATS  output suffixes [json.gz pftrace.gz]
#   RANKS     if set, also N synthetic ranks of 50k kernels: `gpucap merge -jT` of all of them and
#             N builds side by side (xargs -P), for T in THREADS
#   BB        build_bench [build/bench/build/build_bench]
#   CAPTURE   build this capture instead of making one (e.g. a fixture, for a quick check)
# The figures of bench/README.md, "Builder throughput", come from
#   bench/build/scale.sh /tmp/scale                                  (16 cores of the GPU machine)
#   ROUNDS=3 THREADS="1 16" WINDOWS=every:1s bench/build/scale.sh /tmp/s OLD/gpucap NEW/gpucap
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:?usage: scale.sh OUT [GPUCAP ...]}"; shift
mkdir -p "$out"; out="$(cd "$out" && pwd)"
bins=("$@"); ((${#bins[@]})) || bins=("$root/build/tools/gpucap")
for i in "${!bins[@]}"; do bins[$i]="$(cd "$(dirname "${bins[$i]}")" && pwd)/$(basename "${bins[$i]}")"; done
bb="${BB:-$root/build/bench/build/build_bench}"
if [[ -z ${CAPTURE:-} || -n ${RANKS:-} ]] && [[ ! -x $bb ]]; then
  echo "scale.sh: no build_bench at $bb (ninja -C build build_bench, or BB=...)" >&2; exit 2
fi
w="${WORK:-/tmp/scale}"; rm -rf "$w"; mkdir -p "$w"
exec > >(tee "$out/scale.log") 2>&1
echo "cpus $(nproc); $(lscpu | grep -m1 'Model name')"; uptime
if [[ -n ${CAPTURE:-} ]]; then cp "$CAPTURE" "$w/b.gpucap" || exit 1
else "$bb" make "$w/b.gpucap" --kernels "${KERNELS:-5000000}" | tail -1; ((PIPESTATUS[0] == 0)) || exit 1; fi
threads=(${THREADS:-1 2 4 8 16}); max=${threads[-1]}

one() {  # BIN-INDEX WINDOW SUFFIX THREADS
  local b=${bins[$1]} d="$w/o"
  rm -rf "$d"; mkdir -p "$d"
  local times=(); [[ $4 == "$max" ]] && times=(GPUCAP_BUILD_TIMES=1)
  env "${times[@]}" /usr/bin/time -o "$w/time.txt" -f "%e s wall, %U s user, %S s sys, %M KB peak RSS" \
    "$b" build "$w/b.gpucap" --window "$2" -o "$d/t.$3" -j"$4" -q >"$w/last.txt" 2>&1
  local rc=$?
  echo "bin$1 $2 $3 -j$4: $(tail -1 "$w/time.txt")"
  ((rc == 0)) || { echo "  FAILED (rc $rc):"; head -5 "$w/last.txt"; }
  ((${#times[@]})) && cp "$w/last.txt" "$out/times.bin$1.${2//[:\/]/_}.$3.txt"
  # The trace, decompressed, windows in order: the same at every thread count and in every binary.
  (cd "$d" && for f in $(ls | sort -V); do zcat "$f" 2>/dev/null || cat "$f"; done | md5sum | cut -c1-16) \
    >"$w/md5.bin$1.${2//[:\/]/_}.$3.j$4"
}
for ((r = 0; r < ${ROUNDS:-1}; r++)); do
  echo "== round $r"
  for win in ${WINDOWS-every:1s all}; do
    for fmt in ${FORMATS-json.gz pftrace.gz}; do
      for t in "${threads[@]}"; do
        for i in "${!bins[@]}"; do one "$i" "$win" "$fmt" "$t"; done
      done
    done
  done
done
echo "== same output?"
for win in ${WINDOWS-every:1s all}; do
  for fmt in ${FORMATS-json.gz pftrace.gz}; do
    k=${win//[:\/]/_}.$fmt
    echo "$win $fmt: $(cat "$w"/md5.bin*."$k".j* | sort | uniq -c | awk '{print $1 " builds " $2}' | tr '\n' ' ')"
  done
done
if [[ -n ${RANKS:-} ]]; then
  echo "== $RANKS ranks"
  mkdir -p "$w/ranks" "$w/m"
  seq 0 $((RANKS - 1)) | xargs -P"$max" -I{} "$bb" make "$w/ranks/r{}.gpucap" --kernels 50000 >/dev/null 2>&1
  for t in "${threads[@]}"; do
    /usr/bin/time -f "merge -j$t: %e s wall, %U s user, %S s sys, %M KB peak RSS" \
      "${bins[-1]}" merge "$w"/ranks/r*.gpucap -o "$w/m/m$t.json.gz" -q -j"$t"
    zcat "$w/m/m$t.json.gz" | md5sum | cut -c1-16
  done
  /usr/bin/time -f "$RANKS builds, xargs -P$max: %e s wall, %U s user, %S s sys, %M KB peak RSS (largest)" \
    bash -c "ls $w/ranks/*.gpucap | xargs -P$max -I{} ${bins[-1]} build {} -o {}.json.gz -q"
fi
uptime
rm -rf "$w"
