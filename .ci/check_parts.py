#!/usr/bin/env python3
"""Every (family, part) of the engine has its file. The engine's kernels compile by parts
(csrc/cuda/engine/family.cuh): each family of core/op_table.h's RK_FAMILIES, on each input-dtype
part of family.cuh's RK_FAMILY_PARTS, is instantiated in csrc/cuda/engine/parts/<family>_<part>.cu
by the line RK_FAMILY_PART(<Family>, <Part>). A missing file compiles and links (the part is
extern) and fails only when a GPU machine imports the library, so it fails here.

    python3 .ci/check_parts.py [CSRC_DIR]      # exit 1 and list what is missing or stray
"""
from __future__ import annotations

import os
import re
import sys


def x_macro(path: str, name: str) -> list[str]:
    """The names an X-macro's definition lists: `#define NAME(X...) X(a) X(b)` or X(fam, a)."""
    text = open(path).read().replace("\\\n", " ")
    m = re.search(r"^#define " + name + r"\(([^)]*)\)(.*)$", text, flags=re.M)
    if not m:
        raise SystemExit(f"{path}: no #define {name}")
    return re.findall(r"\bX\((?:\w+,\s*)?(\w+)\)", m.group(2))


def problems(csrc: str) -> list[str]:
    families = x_macro(os.path.join(csrc, "core", "op_table.h"), "RK_FAMILIES")
    parts = x_macro(os.path.join(csrc, "cuda", "engine", "family.cuh"), "RK_FAMILY_PARTS")
    where = os.path.join(csrc, "cuda", "engine", "parts")
    have = set(os.listdir(where)) if os.path.isdir(where) else set()
    out = []
    want = set()
    for fam in families:
        for part in parts:
            name = f"{fam.lower()}_{part.lower()}.cu"
            want.add(name)
            path = os.path.join(where, name)
            if name not in have:
                out.append(f"missing: cuda/engine/parts/{name} (RK_FAMILY_PART({fam}, {part}))")
            elif not re.search(r"^RK_FAMILY_PART\(" + fam + r",\s*" + part + r"\)", open(path).read(), flags=re.M):
                out.append(f"cuda/engine/parts/{name} does not say RK_FAMILY_PART({fam}, {part})")
    out += [f"stray: cuda/engine/parts/{n} (no family and part of that name)" for n in sorted(have - want)]
    if not families or not parts:
        out.append(f"no families ({families}) or no parts ({parts}) read")
    return out


def main() -> int:
    csrc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc")
    found = problems(csrc)
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
