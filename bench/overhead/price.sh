#!/usr/bin/env bash
# The recorder's price, measured across processes well enough to resolve a
# point: every variant of one workload once per round, ROUNDS rounds, the
# order rotated and reversed from round to round (so no variant always runs
# first, or after the same neighbour), each run pinned to the same cores,
# each run reporting wall and launching-thread CPU time as medians of blocks
# inside the process. Two variants that are the same program (base, base2)
# show the method's own spread in the same run.
#
#   bench/overhead/price.sh OUT ROUNDS WORKLOAD VARIANT...
#
# WORKLOAD: step (bench/overhead/price_step.py, the yardstick's eager PyTorch
# step) or launch (bench/overhead/launch_loop.cu: empty kernels, alone and
# with the small runtime calls PyTorch makes around each); fork-step and
# fork-graph run the eager step / the graph replay through
# bench/overhead/price_fork.py (torch imported once, each run a fork; only
# variants that are environment settings). launch and fork-* runs pin their
# launching thread (PIN, default 3, -1: none) and time a calibration block
# before each block (launch_loop.cu's header says what that cancels).
# Environment: NEW, OLD: gpucap dists (scripts/package) to compare; TOOLS: a
# folder with libnull_cupti.so (bench/overhead/yardstick/null_cupti.cpp) and
# launch_loop (built there with nvcc when missing); CPUS: taskset's list
# (default 2-9); RUN_TIMEOUT: seconds one run may take (default 120); DEADLINE:
# an epoch second after which no run starts.
# Prints one RUN line per run; bench/overhead/price_summary.py makes the tables.
set -uo pipefail
out="$1"; rounds="$2"; workload="$3"; shift 3
variants=("$@")
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
tools="${TOOLS:-$out/tools}"
mkdir -p "$tools"
if [[ ! -x $tools/launch_loop ]]; then nvcc -O2 -arch=sm_90 "$here/launch_loop.cu" "$here/thread_counters.c" "$here/callgrind_mark.c" -o "$tools/launch_loop" || exit 1; fi
if [[ ! -f $tools/libnull_cupti.so ]]; then
  g++ -O2 -shared -fPIC "$here/yardstick/null_cupti.cpp" -I/usr/local/cuda/include \
      -L/usr/local/cuda/targets/x86_64-linux/lib -lcupti -o "$tools/libnull_cupti.so" || exit 1
fi
cpus="${CPUS:-2-9}"
null="$tools/libnull_cupti.so"

# The variants (variants.sh): the command prefix of each.
source "$here/variants.sh"

pinning=(PIN_CPU="${PIN:-3}" CALIB="${CALIB:-1}")
case "$workload" in
  step) program=(python3 "$here/price_step.py"); pinning=() ;;
  launch) program=("$tools/launch_loop") ;;
  fork-step|fork-graph)
    # Each variant as `name VAR=value ... -UNSET ...` for price_fork.py.
    spec="$out/$workload.spec"; : >"$spec"
    for v in "${variants[@]}"; do
      variant_prefix "$v" || exit 2
      if ((${#pre[@]})) && [[ ${pre[0]} != env ]]; then echo "price.sh: $v is not an environment setting" >&2; exit 2; fi
      line="$v ${pinning[*]}"; skip=1; unset_next=0
      for a in "${pre[@]}" "${vextra[@]}"; do
        if ((skip)) && [[ $a == env ]]; then skip=0; continue; fi
        skip=0
        if ((unset_next)); then line+=" -$a"; unset_next=0; elif [[ $a == -u ]]; then unset_next=1; else line+=" $a"; fi
      done
      echo "$line" >>"$spec"
    done
    FORK_LOG="$out/$workload.log" taskset -c "$cpus" python3 "$here/price_fork.py" "$spec" "$rounds" "${workload#fork-}"
    exit $? ;;
  *) echo "price.sh: unknown workload $workload" >&2; exit 2 ;;
esac

n=${#variants[@]}
for ((r = 0; r < rounds; r++)); do
  order=()
  for ((i = 0; i < n; i++)); do order+=("${variants[$(((i + r) % n))]}"); done
  if ((r % 2)); then
    rev=(); for ((i = n - 1; i >= 0; i--)); do rev+=("${order[$i]}"); done; order=("${rev[@]}")
  fi
  for v in "${order[@]}"; do
    variant_prefix "$v" || exit 2
    if [[ -n ${DEADLINE:-} ]] && (($(date +%s) >= DEADLINE)); then echo "price.sh: deadline reached"; exit 0; fi
    t0=$(date +%s.%N)
    taskset -c "$cpus" timeout "${RUN_TIMEOUT:-120}" env "${pinning[@]}" "${vextra[@]}" "${pre[@]}" "${program[@]}" >"$out/run.log" 2>&1
    rc=$?
    wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
    echo "RUN workload=$workload variant=$v round=$r rc=$rc run_s=$wall $(grep -h '^RESULT' "$out/run.log" | tail -1 | cut -d' ' -f2-)"
    cat "$out/run.log" >>"$out/$workload.$v.log"
    rm -f "$out"/cap-*.gpucap
  done
done
