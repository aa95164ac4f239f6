#!/usr/bin/env bash
# The recorder under stress on a GPU machine; each case prints one CASE line
# and leaves its capture's `gpucap info` in OUT.
#   tests/gpu/stress.sh DIST OUT
set -uo pipefail
dist="$(cd "$1" && pwd)"; out="$2"; mkdir -p "$out"; out="$(cd "$out" && pwd)"
export LD_LIBRARY_PATH="/usr/local/cuda/targets/x86_64-linux/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
g="$dist/bin/gpucap"; s="$dist/gpu/stress"
check() {  # name rc
  local info="$out/$1.info"
  "$g" info "$out/$1.gpucap" >"$info" 2>&1
  echo "CASE $1 rc=$2 info_rc=$? $(grep -E '^(closed|damage)' "$info" | tr '\n' ' ') $(grep -o 'CONCURRENT_KERNEL: [0-9]*' "$info")"
}
# 64 threads launching, recording toggled by SIGUSR2 every 250 ms, 8 MiB cap.
timeout 60 "$g" record --max-mb 8 -o "$out/cap_toggle.gpucap" -- "$s" 64 4 1 exit >"$out/cap_toggle.log" 2>&1
check cap_toggle $?
# The program crashes: the capture reads back to its last frame.
timeout 60 "$g" record -o "$out/segv.gpucap" -- "$s" 16 1.5 0 segv >"$out/segv.log" 2>&1
check segv $?
# SIGTERM to the program: the recorder flushes and closes the file first.
"$g" record -o "$out/sigterm.gpucap" -- "$s" 16 30 0 hang >"$out/sigterm.log" 2>&1 &
sleep 3; pkill -TERM -x stress; wait $!
check sigterm $?
# SIGKILL: no flush possible; what was written must still read.
"$g" record -o "$out/sigkill.gpucap" -- "$s" 16 30 0 hang >"$out/sigkill.log" 2>&1 &
sleep 3; pkill -KILL -x stress; wait $!
check sigkill $?
