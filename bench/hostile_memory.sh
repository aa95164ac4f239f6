#!/bin/bash
# Peak RSS (MB), exit status and output size of every command on each capture:
#   bench/hostile_memory.sh build/tools/gpucap CAPTURE...   (captures: write_hostile_cases DIR)

G=$1; shift
O=$(mktemp -d); mkdir -p $O
for f in "$@"; do
  n=$(basename $f .gpucap); sz=$(stat -c %s $f)
  line="$n $((sz/1024))KB"
  run() { local tag=$1; shift; rm -rf $O/*; local t; (ulimit -v 3000000; /usr/bin/time -o $O.tm -f "%M %x" timeout 60 nice $G "$@" >/dev/null 2>$O.err); t=$(tail -1 $O.tm); 
    local osz=$(du -sk $O 2>/dev/null | cut -f1); line="$line | $tag $(( ${t% *} / 1024 ))MB rc${t#* } o${osz}K"; }
  run info info $f
  run infoj info $f --json
  run build build $f -q -o $O/t.json
  run pft build $f -q -o $O/t.pftrace
  run nvtx build $f -q -w 'nvtx:.*' -o $O/w.json
  run stats stats $f
  run export export $f -q -o $O/t.sqlite
  run report report $f -q -o $O/r.html
  run trim trim $f -q -w all -o $O/t.gpucap
  run anon trim $f -q -w all --anonymize -o $O/a.gpucap
  run merge merge $f $f -q -o $O/m.json
  echo "$line"
done
