#!/usr/bin/env python3
"""A large torch.profiler trace for bench/json: the traceEvents of every
fixtures/kineto/*.kineto.json.gz, their text as Kineto wrote it, repeated
until the document is at least MB megabytes.
  make_trace.py OUT.json [MB]"""
import glob, gzip, json, os, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
out, mb = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 64
pieces = []
for p in sorted(glob.glob(os.path.join(root, 'fixtures/kineto/*.kineto.json.gz'))):
    with gzip.open(p, 'rt', encoding='utf-8') as f:
        text = f.read()
    at = text.index('[', text.index('"traceEvents"'))
    _, end = json.JSONDecoder().raw_decode(text, at)
    pieces.append(text[at + 1:end - 1].strip().rstrip(','))
block = ',\n'.join(pieces)
copies = max(1, int(mb * 1e6 / len(block)) + 1)
with open(out, 'w', encoding='utf-8') as f:
    f.write('{\n  "schemaVersion": 1,\n  "baseTimeNanoseconds": 1700000000000000000,\n  "traceEvents": [\n')
    f.write(',\n'.join([block] * copies))
    f.write('\n  ]\n}\n')
print(f'{out}: {os.path.getsize(out)} bytes, {copies} copies of {len(pieces)} traces\' events')
