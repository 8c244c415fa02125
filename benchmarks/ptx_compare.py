"""Kernel by kernel, whether two PTX files hold the same instructions: the opcodes of each entry
and function counted (registers, labels, parameters and debug lines ignored), and the kernels whose
counts differ listed with the opcodes that moved. A change meant to leave the GPU's arithmetic as it
is (a refactor, an explicit fma where nvcc contracted) shows no differing kernel; one that moves an
fma shows it in `fma.rn.*` against `mul.*` and `add.*`.

    nvcc ... -ptx csrc/cuda/engine/parts/moments_f64.cu -o before.ptx   # the build's flags, sm_90
    python benchmarks/ptx_compare.py before.ptx after.ptx
"""
from __future__ import annotations

import argparse
import collections
import re

ENTRY = re.compile(r"^\.(?:visible |weak )?(?:\.entry|\.func)\s+(?:\([^)]*\)\s*)?(\S+?)\(")
SKIP = (".reg", ".loc", ".param", "ld.param", "{", "}", "//")


def kernels(path: str) -> dict[str, collections.Counter]:
    """Opcode counts per entry or function of a PTX file."""
    out: dict[str, collections.Counter] = {}
    cur = None
    for line in open(path):
        m = ENTRY.match(line)
        if m:
            cur = m.group(1)
            out[cur] = collections.Counter()
            continue
        t = line.strip()
        if cur is None or not t or t.endswith(":") or t.startswith(SKIP):
            continue
        words = t.split()
        op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
        out[cur][op] += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--show", type=int, default=12, help="differing kernels to list")
    args = ap.parse_args()
    a, b = kernels(args.a), kernels(args.b)
    differing = 0
    for k in sorted(set(a) | set(b)):
        ca, cb = a.get(k, collections.Counter()), b.get(k, collections.Counter())
        if ca == cb:
            continue
        differing += 1
        if differing <= args.show:
            moved = {op: (ca[op], cb[op]) for op in sorted(set(ca) | set(cb)) if ca[op] != cb[op]}
            print(f"{k}: {moved}")
    print(f"kernels: {len(a)} and {len(b)}; differing: {differing}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
