#!/usr/bin/env bash
# The recorder's price per NVTX range in wall time: nvtx_ranges (no CUDA)
# under each variant of variants.sh, natively, in ROUNDS rounds whose order
# rotates, so that a drift of the machine falls on every variant alike. The
# process runs on CPUS (default 2,3: the calling thread and the recorder's
# control thread, off CPU 0's interrupts).
#
#   bench/overhead/nvtx_price.sh OUT ROUNDS VARIANT...
#
# Environment: NEW (and OLD for *_old variants) gpucap dists, TOOLS
# (nvtx_ranges), BLOCKS (default 9), PER (default 20000), CPUS.
# Prints one "ROUND variant=V round=R <nvtx_ranges' RESULT fields>" line per
# run (also in OUT/rounds.txt), then nvtx_price_summary.py's table.
set -uo pipefail
out="$1"; rounds="$2"; shift 2
variants=("$@")
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
tools="${TOOLS:?TOOLS: nvtx_ranges}"
null="$tools/libnull_cupti.so"
source "$here/variants.sh"
: >"$out/rounds.txt"
n=${#variants[@]}
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + r) % n))]}
    variant_prefix "$v" || exit 2
    line=$(env BLOCKS="${BLOCKS:-9}" PER="${PER:-20000}" "${vextra[@]}" "${pre[@]}" \
           taskset -c "${CPUS:-2,3}" "$tools/nvtx_ranges" 2>"$out/$v-$r.err" | grep '^RESULT')
    echo "ROUND variant=$v round=$r ${line#RESULT }" | tee -a "$out/rounds.txt"
    rm -f "$out"/cap-*.gpucap
  done
done
python3 "$here/nvtx_price_summary.py" "$out/rounds.txt"
