#!/bin/bash
# The 2-thread / 1-thread ratio on a 2-core machine (issue 20's target:
# >= 1.7x wall), in one command. build_bench from DIR (default
# build/bench/build), a 1M-kernel capture (4M events) made once into $TMP,
# every:200ms (11 windows) and `all` (one window, rendered in pieces), each
# at -j1 and -j2, alternating, ROUNDS times (default 3); prints wall and
# CPU seconds per run, the load average before and after, and the ratio of
# the best walls (the machine may be shared: CPU-seconds say how much work
# there was, the load how much else ran).
#   bench/build/two_core.sh [DIR]
set -e
DIR=${1:-build/bench/build}
B=$DIR/build_bench
TMP=${TMP:-/tmp/two_core}
ROUNDS=${ROUNDS:-3}
mkdir -p "$TMP"
[ -f "$TMP/c.gpucap" ] || "$B" make "$TMP/c.gpucap" --kernels 1000000 > /dev/null
echo "cores $(nproc), load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for window in every:200ms all; do
  best1=; best2=
  for round in $(seq "$ROUNDS"); do
    for t in 1 2; do
      rm -rf "$TMP/o"; mkdir -p "$TMP/o"
      # wall and CPU of the build alone (build_bench times it, not the make)
      line=$("$B" build "$TMP/c.gpucap" "$TMP/o/t.json.gz" --window "$window" --threads $t | grep '^wall')
      wall=$(echo "$line" | sed 's/^wall \([0-9.]*\) s, cpu \([0-9.]*\) s.*/\1/')
      cpu=$(echo "$line" | sed 's/^wall \([0-9.]*\) s, cpu \([0-9.]*\) s.*/\2/')
      echo "$window -j$t round $round: wall $wall s, cpu $cpu s, load $(cut -d' ' -f1 /proc/loadavg)"
      if [ $t = 1 ]; then
        best1=$(echo "${best1:-$wall} $wall" | awk '{print ($1 < $2) ? $1 : $2}')
      else
        best2=$(echo "${best2:-$wall} $wall" | awk '{print ($1 < $2) ? $1 : $2}')
      fi
    done
  done
  echo "$window: best wall -j1 $best1 s, -j2 $best2 s: ratio $(echo "$best1 $best2" | awk '{printf "%.2f", $1 / $2}')x"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
