#!/usr/bin/env bash
# On the GPU machine: records each Kineto-differential fixture pair (issue 38)
# of tests/gpu/kineto/: the program once under `gpucap record` (mode gpucap)
# and once under torch.profiler (mode kineto), separate runs of the same
# deterministic program. Leaves in OUT, per program NAME:
#   NAME.gpucap              the capture (the process that ran the steps)
#   NAME.kineto.json.gz      the Kineto trace of the compared steps, gzipped
#                            (the programs profile only those steps, so the
#                            trace needs no cutting)
#   NAME.expect.json         both runs' manifests and the record command
#   NAME.info.txt            `gpucap info` of the capture
#   NAME.log                 both runs' output
# and manifest.json listing the pairs.
#
#   tests/gpu/record_kineto_pairs.sh DIST OUT [NAME...]
#
# DIST is a scripts/package tree holding bin/gpucap and lib/. The programs
# are read from KINETO_DIR (default: kineto/ beside this script). With NAMEs,
# only those pairs are recorded.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dist="$(cd "$1" && pwd)"; out="$2"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
progs="$(cd "${KINETO_DIR:-$here/kineto}" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
g="$dist/bin/gpucap"
shift 2
only=" $* "
# NVLink multicast stays off: it can take the host's GPUs out of service.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
timeout_s="${PAIR_TIMEOUT:-400}"
status=0

# pair NAME MARKS KINDS LAUNCH...: MARKS is the --window-nvtx regex, or - for
# a capture without record-time marks; the program gets MODE OUT_DIR after
# LAUNCH.
pair() {
  local name="$1" marks="$2" kinds="$3"; shift 3
  [[ "$only" == "  " || "$only" == *" $name "* ]] || return 0
  local work="$out/work-$name" log="$out/$name.log"
  rm -rf "$work"; mkdir -p "$work"; : >"$log"
  local rec=(record --kinds "$kinds")
  [[ "$marks" == - ]] || rec+=(--window-nvtx "$marks")
  echo "== $name: gpucap ${rec[*]} -- $* gpucap OUT" | tee -a "$log"
  local t0=$SECONDS
  if ! timeout "$timeout_s" "$g" "${rec[@]}" -o "$work/$name.%p.gpucap" -- "$@" gpucap "$work" >>"$log" 2>&1; then
    echo "FAILED: $name (gpucap run)" | tee -a "$log"; status=1
  fi
  echo "   gpucap run: $((SECONDS - t0)) s" | tee -a "$log"
  # The capture that holds the steps is the largest: a launcher (torchrun)
  # that starts CUDA writes a small one of its own.
  local cap; cap="$(ls -S "$work"/*.gpucap 2>/dev/null | head -1)"
  ls -l "$work"/*.gpucap >>"$log" 2>&1
  if [[ -n "$cap" ]]; then
    mv "$cap" "$out/$name.gpucap"
    "$g" info "$out/$name.gpucap" >"$out/$name.info.txt" 2>&1 || { echo "FAILED: $name (info)" | tee -a "$log"; status=1; }
  else
    echo "FAILED: $name (no capture)" | tee -a "$log"; status=1
  fi
  echo "== $name: kineto -- $* kineto OUT" | tee -a "$log"
  t0=$SECONDS
  if ! timeout "$timeout_s" "$@" kineto "$work" >>"$log" 2>&1; then
    echo "FAILED: $name (kineto run)" | tee -a "$log"; status=1
  fi
  echo "   kineto run: $((SECONDS - t0)) s" | tee -a "$log"
  if [[ -f "$work/$name.kineto.json" ]]; then
    gzip -9 -c "$work/$name.kineto.json" >"$out/$name.kineto.json.gz"
    python3 "$progs/kineto_summary.py" "$work/$name.kineto.json" "$work/$name.kineto.manifest.json" >"$out/$name.kineto_summary.txt" 2>&1 \
      || echo "summary failed: $name" | tee -a "$log"
  fi
  # The command as it reads in fixtures/: the program by its path in the repo.
  local shown=("${@/#$progs\//tests/gpu/kineto/}")
  local cmd="gpucap record --kinds $kinds"
  [[ "$marks" == - ]] || cmd+=" --window-nvtx '$marks'"
  cmd+=" -o $name.gpucap -- ${shown[*]} gpucap OUT"
  local warmed=""; [[ -d "$out/work-$name-prewarm" ]] && warmed=prewarmed
  python3 "$progs/pair_manifest.py" expect "$name" "$work" "$cmd" "$marks" $warmed >"$out/$name.expect.json" \
    || { echo "FAILED: $name (manifest)" | tee -a "$log"; status=1; }
  ls -l "$out/$name".* | tee -a "$log"
}

# prewarm NAME LAUNCH...: one unrecorded run in mode gpucap that fills
# Inductor's cache (/tmp/torchinductor_$USER), so that both recorded runs
# compile from it: a cold compile benchmarks candidate kernels (about 16000
# kernel launches for compile_train) that would swell the capture.
prewarm() {
  local name="$1"; shift
  [[ "$only" == "  " || "$only" == *" $name "* ]] || return 0
  echo "== $name: prewarm (not recorded) -- $* gpucap SCRATCH"
  timeout "$timeout_s" "$@" gpucap "$out/work-$name-prewarm" >"$out/$name.prewarm.log" 2>&1 \
    || echo "prewarm failed: $name (see $name.prewarm.log)"
}

py=(python3)
tr=(torchrun --standalone --nproc_per_node=1)
# Eager training in train#N, backward on autograd's thread, eager CUDA events.
pair eager_train 'train#\d+' default,cuda_event "${py[@]}" "$progs/eager_train.py"
# torch.compile training in `step N` and inference in `infer N`.
prewarm compile_train "${py[@]}" "$progs/compile_train.py"
pair compile_train '(step|infer) \d+' default "${py[@]}" "$progs/compile_train.py"
# torch.cuda.graph over two streams with a D2D copy node; no record-time marks.
pair graph_two_streams - default "${py[@]}" "$progs/graph_two_streams.py"
# torch.compile(mode="reduce-overhead"): CUDA-graph trees, forward and backward.
pair compile_reduce_overhead 'train#\d+' default "${py[@]}" "$progs/compile_reduce_overhead.py"
# DataLoader workers, pinned memory, a side copy stream.
pair dataloader_side_stream 'batch#\d+' default "${py[@]}" "$progs/dataloader_side_stream.py"
# A second Python thread on its own stream under its own ranges; no marks.
pair second_thread - default "${py[@]}" "$progs/second_thread.py"
# A transformer from a DataLoader, its operators under emit_nvtx(record_shapes=True)
# beside Kineto's record_shapes=True (issue 39: cpu_op names, counts, links).
pair emit_nvtx_train 'train#\d+' default "${py[@]}" "$progs/emit_nvtx_train.py"
# One NCCL rank under torchrun.
pair nccl_single_rank 'iteration#\d+' default "${tr[@]}" "$progs/nccl_single_rank.py"

python3 "$progs/pair_manifest.py" index "$out" >"$out/manifest.json" || status=1
exit $status
