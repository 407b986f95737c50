#!/usr/bin/env python3
"""Whether a change to the kernels' files left their device code as it was: splits PTX files into
their functions (.entry and .func), drops what depends only on where the code sits (.loc and .file
lines, comments, the debug sections after a file's last function, the numbering of labels and local
depots), and compares the two sets function by function. Every occurrence of a function in the
second set (a kernel instantiated in several files) must equal the first set's.

    nvcc <the library's flags> -arch=compute_90 -ptx kernels/src/soft_dtw.cu -o before.ptx   # on the old tree
    nvcc <the same flags> -arch=compute_90 -ptx kernels/src/<each file>.cu -o after/<file>.ptx
    ptx_functions.py before.ptx -- after/*.ptx
    ptx_functions.py --sizes after/*.ptx        # PTX bytes per file: what each file gives the compiler

Exit status 0 when the two sets hold the same functions with the same bodies."""
import re
import sys

_START = re.compile(r'^(?:\.visible |\.weak )?(?:\.entry|\.func)\b.*$', re.M)
_NAME = re.compile(r'(?:\.entry|\.func)\s+(?:\([^)]*\)\s*)?(\S+?)\s*\(?$')


def functions(path):
    """[(name, normalised body)] of one PTX file, in order."""
    text = open(path).read()
    starts = [m.start() for m in _START.finditer(text)]
    out = []
    for k, s in enumerate(starts):
        body = text[s:starts[k + 1] if k + 1 < len(starts) else len(text)].split('\n\t.section')[0]
        head = body.split('\n', 1)[0]
        if '{' not in body:
            continue  # a declaration
        m = _NAME.search(head)
        lines = [re.sub(r'__local_depot\d+', '__local_depot', re.sub(r'\$L__BB\d+_', '$L__BB_', line))
                 for line in body.split('\n')
                 if line.strip() and not line.strip().startswith(('.loc', '.file', '//'))]
        out.append((m.group(1) if m else head, '\n'.join(lines)))
    return out


def main(argv):
    if argv and argv[0] == '--sizes':
        for path in argv[1:]:
            print(f"{sum(len(b) for _, b in functions(path)) / 1e6:8.2f} MB  {len(functions(path)):4d} functions  {path}")
        return 0
    split = argv.index('--')
    before = {}
    for path in argv[:split]:
        for name, body in functions(path):
            before.setdefault(name, body)
    after = {}
    for path in argv[split + 1:]:
        for name, body in functions(path):
            after.setdefault(name, []).append((path, body))
    missing, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    changed = [(name, path) for name, seen in after.items() if name in before
               for path, body in seen if body != before[name]]
    repeated = sum(len(seen) > 1 for seen in after.values())
    print(f"{len(before)} functions before, {len(after)} after ({repeated} compiled in more than one file)")
    for label, items in (("only before", missing), ("only after", added), ("different", changed)):
        print(f"{label}: {len(items)}", *items[:10], sep="\n  ")
    return 0 if not (missing or added or changed) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
