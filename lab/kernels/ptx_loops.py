#!/usr/bin/env python3
"""Instruction counts of a kernel's loops in PTX, to estimate where its instructions go before a
GPU (and ncu) is at hand. PTX is not SASS: register moves mostly vanish and 64-bit operations may
split, so the counts are estimates to set beside ncu's executed counts, not to replace them.

    nvcc -Ikernels/include -O3 -DNDEBUG -arch=sm_90 --expt-relaxed-constexpr -std=c++17 -ptx \\
        kernels/src/sqeuclidean_float.cu -o sqeuclidean_float.ptx
    ptx_loops.py sqeuclidean_float.ptx 'jacobian_kernelIfLi64ELb0EfE'           # each loop of that kernel
    ptx_loops.py sqeuclidean_float.ptx 'jacobian_kernelIfLi64ELb0EfE' --blocks '$L__BB15_8' '$L__BB15_72'

A loop is a branch back to an earlier label: its count is every instruction from that label to the
branch, each path once (a loop with branches inside executes fewer)."""
import argparse
import collections
import re
import sys

LABEL = re.compile(r"^(\$L__\w+):")
BRANCH = re.compile(r"\bbra(?:\.uni)?\s+(\$L__\w+)")
GUARD = re.compile(r"^@!?%p\d+\s+")


def kernel_text(ptx, name_part):
    """The body of the one .entry whose mangled name contains name_part."""
    entries = [m.start() for m in re.finditer(r"^\.visible \.entry ", ptx, re.M)] + [len(ptx)]
    found = [ptx[a:b] for a, b in zip(entries, entries[1:]) if name_part in ptx[a:ptx.index("(", a)]]
    if len(found) != 1:
        raise SystemExit(f"ptx_loops: {len(found)} kernels match {name_part!r}; name one exactly")
    return found[0]


def basic_blocks(text):
    """[(label, [instruction, ...])] in order; the entry block is labelled 'entry'."""
    blocks, label, body = [], "entry", []
    for line in text.split("\n"):
        s = line.strip()
        m = LABEL.match(s)
        if m:
            blocks.append((label, body))
            label, body = m.group(1), []
        elif s.endswith(";") and not s.startswith((".", "//")):
            body.append(s)
    blocks.append((label, body))
    return blocks


def opcode(instruction):
    """'add' of '@%p1 add.s64 %rd1, ...'."""
    return GUARD.sub("", instruction).split()[0].split(".")[0].rstrip(";")


def loops(blocks):
    """Each back edge as the blocks from its target to the branch, the last cut after the branch."""
    where = {label: i for i, (label, _) in enumerate(blocks)}
    found = []
    for i, (label, body) in enumerate(blocks):
        for k, s in enumerate(body):
            m = BRANCH.search(s)
            if m and where.get(m.group(1), len(blocks)) <= i:
                found.append(blocks[where[m.group(1)]:i] + [(label, body[:k + 1])])
    return found


def counts(blocks):
    return collections.Counter(opcode(s) for _, body in blocks for s in body)


def describe(label, c, top=12):
    return f"{label}: {sum(c.values())} instructions, " + ", ".join(f"{k} {v}" for k, v in c.most_common(top))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ptx")
    parser.add_argument("kernel", help="a part of the kernel's mangled name that names one .entry")
    parser.add_argument("--blocks", nargs=2, metavar=("FIRST", "LAST"), help="count each block from FIRST to LAST")
    args = parser.parse_args(argv)
    with open(args.ptx) as f:
        blocks = basic_blocks(kernel_text(f.read(), args.kernel))
    if args.blocks:
        labels = [label for label, _ in blocks]
        missing = [b for b in args.blocks if b not in labels]
        if missing:
            raise SystemExit(f"ptx_loops: no block {', '.join(missing)} in that kernel")
        first, last = (labels.index(b) for b in args.blocks)
        for label, body in blocks[first:last + 1]:
            print(describe(label, counts([(label, body)]), top=8))
        return 0
    for loop in loops(blocks):
        print(describe(f"loop {loop[0][0]}..{loop[-1][0]} ({len(loop)} blocks)", counts(loop)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
