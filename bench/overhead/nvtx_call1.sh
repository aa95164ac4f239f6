#!/usr/bin/env bash
# Issue 44, device call 1 (carry .carry-nvtx: new/ = scripts/package of this branch, old/ = the same with
# main's recorder at 11a9517, tools/nvtx_ranges built with valgrind's headers, valgrind/ = Debian 12's
# valgrind.bin and callgrind tool, bench/ = this branch's bench/overhead).
#  A. Instructions per range on the calling thread (instr.sh nvtx), the variants in parallel on CPUs 0-12.
#  B. ns per range natively (nvtx_price.sh, rotated rounds) of the same variants: the rate, instructions/ns.
#  C. emit_nvtx_job.py in rotated rounds: base, emit_nvtx alone, under old and new gpucap (emit_nvtx_rounds.sh).
#  D. Round 0's captures of C, old against new: same_trace.py on their traces, and their drops.
set -u
R=$PWD; P=$R/.carry-nvtx; B=$P/bench
export NEW=$P/new OLD=$P/old TOOLS=$P/tools VALGRIND=$P/valgrind/valgrind VALGRIND_LIB=$P/valgrind/lib
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
W=/tmp/nvtxc1; mkdir -p $W
nproc
v=(base r_direct r_direct_old p_direct p_direct_old r_window r_window_old p_gate p_gate_old)
echo "=== A t=$(el)"
JOBS=13 BLOCKS=3 RUN_TIMEOUT=150 taskset -c 0-12 bash $B/instr.sh $W/instr nvtx "${v[@]}" > $OUT/instr_nvtx.txt 2>&1
grep -E "^RUN" $OUT/instr_nvtx.txt | cut -c1-120
python3 $B/callgrind_blocks.py table $W/instr/instr.txt base | grep -E "^[a-z]|^\| (base|r_|p_)" | cut -d'|' -f2,4,6,7 | head -100
echo "=== B t=$(el)"
ROUNDS_B=${ROUNDS_B:-3}
PER=10000 BLOCKS=9 CPUS=2-5 bash $B/nvtx_price.sh $W/price $ROUNDS_B "${v[@]}" > $OUT/nvtx_price.txt 2>&1
tail -14 $OUT/nvtx_price.txt
echo "=== C t=$(el)"
END=$(( ${C_END:-350} - $(el) )) CPUS=2-9 bash $B/emit_nvtx_rounds.sh $W/emit ${ROUNDS_C:-8} > $OUT/emit_rounds.txt 2>&1
grep -v "^ROUND" $OUT/emit_rounds.txt | tail -20
grep "^ROUND" $OUT/emit_rounds.txt | tr '\n' ';' | cut -c1-1500; echo
echo "=== D t=$(el)"
g=$NEW/bin/gpucap
for x in emit_old emit_new; do
  $g info $W/emit/$x-0.gpucap 2>&1 | grep -E "^(ranges|drops|closed|damage|records)"
  $g build -q $W/emit/$x-0.gpucap -o $W/$x.json; echo "build $x rc=$?"
done
python3 $B/same_trace.py $W/emit_old.json $W/emit_new.json 2>&1 | tail -14
$g info --json $W/emit/emit_new-0.gpucap | grep -E '"range_(clock|chunk)[a-z_]*"' | head -4
echo "done t=$(el)"
