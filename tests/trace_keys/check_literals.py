#!/usr/bin/env python3
"""Fails when a trace argument key or category appears as a string literal
outside builder's trace_keys.h.

  check_literals.py SOURCE_DIR [FILE...]

Reads every string constant trace_keys.h defines, then scans the C++ sources
of builder/ and tools/ (their src/ and include/ folders; tests compare against
text of their own on purpose) for a string literal whose whole text is one of
them. Comments are not code and are skipped; so is a literal that spells a
word of another contract (an export column, an info JSON field) and is listed
with its file in allowed_literals.txt beside this script, one
"PATH LITERAL-TEXT" a line. With FILE arguments, only those files are scanned
(to check the checker on a planted literal).
"""
import os
import re
import sys

KEY_RE = re.compile(r'inline\s+constexpr\s+std::string_view\s+(k\w+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*;')


def keys_of(header_text):
    return {text: name for name, text in KEY_RE.findall(header_text)}


def strip_comments(text):
    """Returns (code without comments, [(line, literal text)]) for C++ text.
    Walks the text once, so a // inside a string or a quote inside a comment
    is read as what it is."""
    out = []
    literals = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            out.append(c)
            i += 1
        elif text.startswith('//', i):
            end = text.find('\n', i)
            i = n if end < 0 else end
        elif text.startswith('/*', i):
            end = text.find('*/', i + 2)
            end = n if end < 0 else end + 2
            line += text.count('\n', i, end)
            out.append('\n' * text.count('\n', i, end))
            i = end
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            open_paren = text.find('(', i + 2)
            delim = text[i + 2:open_paren]
            close = text.find(')' + delim + '"', open_paren)
            close = n if close < 0 else close
            literals.append((line, text[open_paren + 1:close]))
            line += text.count('\n', i, close)
            out.append('""')
            i = close + len(delim) + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            literals.append((line, text[i + 1:j]))
            out.append('""')
            i = j + 1
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out), literals


def sources(root):
    for top in ('builder', 'tools'):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            rel = os.path.relpath(dirpath, root).split(os.sep)
            if not any(part in ('src', 'include') for part in rel):
                continue
            for f in sorted(filenames):
                if f.endswith(('.cc', '.h')):
                    yield os.path.join(dirpath, f)


def main(argv):
    root = argv[1]
    header = os.path.join(root, 'builder/include/gpucap/builder/trace_keys.h')
    with open(header, encoding='utf-8') as f:
        keys = keys_of(f.read())
    if len(keys) < 40:
        print(f'check_literals: read only {len(keys)} keys from {header}; the pattern no longer matches it')
        return 1
    allowed = set()
    allow_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'allowed_literals.txt')
    with open(allow_path, encoding='utf-8') as f:
        for raw in f:
            raw = raw.rstrip('\n')
            if not raw or raw.startswith('#'):
                continue
            path, _, literal = raw.partition(' ')
            allowed.add((path, literal))
    files = [os.path.join(root, p) for p in argv[2:]] or list(sources(root))
    found = 0
    for path in files:
        rel = os.path.relpath(path, root)
        if os.path.samefile(path, header):
            continue
        with open(path, encoding='utf-8', errors='replace') as f:
            _, literals = strip_comments(f.read())
        for line, text in literals:
            if text in keys and (rel, text) not in allowed:
                print(f'{rel}:{line}: "{text}" is trace_keys::{keys[text]}; use the constant')
                found += 1
    if found:
        print(f'check_literals: {found} trace key literal(s) outside trace_keys.h')
        return 1
    print(f'check_literals: {len(keys)} keys, {len(files)} files, no literal outside trace_keys.h')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
