#!/usr/bin/env python3
"""Includes point downward only. Each file under csrc/ belongs to a layer; a file may include its
own layer's files and lower layers', never a higher one's:

    4  torch/        every file that includes ATen: schemas, autograd, bindings, the op front ends
    3  cuda/        (but block/ and launchers.h) the engine's kernels and dispatch, the gallery
    2  cuda/block/, cuda/launchers.h, cpu/   block primitives, the CUDA interface, the CPU backend
    1  engine/, tuning/                     torch-free algorithm; every knob
    0  core/                                torch- and CUDA-free vocabulary

Quoted includes are resolved from csrc/ (the build's include root). Also fails on a file under
csrc/ in no layer, on a quoted include that names no file, and on ATen/torch headers outside
torch/ (the layers below it are torch-free) except the CPU backend's c10/ATen/Parallel.h
utilities.

    python3 .ci/check_layers.py [CSRC_DIR]      # exit 1 and list the violations
"""
from __future__ import annotations

import os
import re
import sys

LAYERS = [("torch/", 4), ("cuda/block/", 2), ("cuda/launchers.h", 2), ("cuda/", 3), ("cpu/", 2), ("engine/", 1),
          ("tuning/", 1), ("core/", 0)]
# Torch headers the CPU backend may use (threads and 16-bit float types, no tensors).
CPU_TORCH_OK = ("ATen/Parallel.h", "c10/")


def layer(rel: str) -> int | None:
    for prefix, rank in LAYERS:
        if rel == prefix or rel.startswith(prefix):
            return rank
    return None


def violations(csrc: str) -> list[str]:
    out = []
    for dirpath, _, names in os.walk(csrc):
        for name in sorted(names):
            if not name.endswith((".h", ".cuh", ".cu", ".cpp", ".inc")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, csrc).replace(os.sep, "/")
            rank = layer(rel)
            if rank is None:
                out.append(f"{rel}: in no layer (put it under one of {', '.join(p for p, _ in LAYERS)})")
                continue
            with open(path) as f:
                for lineno, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s*([<"])([^>"]+)[>"]', line)
                    if not m:
                        continue
                    inc = m.group(2)
                    if m.group(1) == "<":
                        if rank < 4 and inc.startswith(("ATen/", "torch/", "c10/")) and not (
                                rel.startswith("cpu/") and inc.startswith(CPU_TORCH_OK)):
                            out.append(f"{rel}:{lineno}: includes <{inc}>: torch headers belong in torch/")
                        continue
                    if not os.path.isfile(os.path.join(csrc, inc)):
                        out.append(f"{rel}:{lineno}: includes \"{inc}\", which is not a file under csrc/")
                        continue
                    r = layer(inc)
                    if r is not None and r > rank:
                        out.append(f"{rel}:{lineno}: includes \"{inc}\" (layer {r}) from layer {rank}: upward")
    return out


def main(argv: list[str]) -> int:
    csrc = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc")
    v = violations(csrc)
    for line in v:
        print(line)
    print(f"layers: {len(v)} violations")
    return 1 if v else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
