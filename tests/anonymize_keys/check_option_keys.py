#!/usr/bin/env python3
"""Fails when the recorder reads a GPUCAP_* option that anonymize does not
know as one of ours.

  check_option_keys.py SOURCE_DIR [FILE...]

The recorder writes every GPUCAP_* variable it sees into the capture's
session options; `gpucap trim --anonymize` keeps the keys it knows
(KnownOptionKeys in tools/trim/src/anonymize.cc) and hashes any other, as a
variable of the user's own whose name may say something. A key we add to the
recorder and forget there is hashed in every anonymized capture. This script
collects the string literals that are a whole GPUCAP_ option name in
recorder/src and tools/cli (or in FILE..., to check the checker on a planted
one) and lists those KnownOptionKeys lacks.
"""
import os
import re
import sys

LITERAL_RE = re.compile(r'"(GPUCAP_[A-Z0-9_]*[A-Z0-9])"')


def known_keys(source_dir):
    text = open(os.path.join(source_dir, 'tools/trim/src/anonymize.cc')).read()
    block = re.search(r'KnownOptionKeys\(\)\s*\{.*?=\s*\{(.*?)\};', text, re.S)
    if not block:
        sys.exit('check_option_keys: KnownOptionKeys not found in tools/trim/src/anonymize.cc')
    return set(re.findall(r'"([^"]+)"', block.group(1)))


def sources(source_dir):
    for folder in ('recorder/src', 'tools/cli'):
        for root, _, names in os.walk(os.path.join(source_dir, folder)):
            for name in sorted(names):
                if name.endswith(('.cc', '.h')):
                    yield os.path.relpath(os.path.join(root, name), source_dir)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    source_dir = sys.argv[1]
    known = known_keys(source_dir)
    files = sys.argv[2:] or list(sources(source_dir))
    missing = []
    for path in files:
        for number, line in enumerate(open(os.path.join(source_dir, path)), 1):
            for key in LITERAL_RE.findall(line):
                if key not in known:
                    missing.append((path, number, key))
    for path, number, key in missing:
        print(f'{path}:{number}: "{key}" is not in anonymize\'s KnownOptionKeys (tools/trim/src/anonymize.cc)')
    if missing:
        print(f'check_option_keys: {len(missing)} option key literal(s) unknown to anonymize')
        return 1
    print(f'check_option_keys: {len(files)} files, every GPUCAP_ option known')
    return 0


if __name__ == '__main__':
    sys.exit(main())
