"""The bits corpus: a hash of every result reducekit gives on a fixed set of inputs, so that a change
meant to move no bit (a refactor) can show that it moved none.

Cases: every op of reducekit.OPS (with its argument variants: vector_norm's ords, var's
corrections, a widening dtype=) x every dtype it takes (its errors are recorded too) x shapes,
layouts and dims that reach every kernel shape of the engine (whole tensors from 1 to 2^20 + 3
values, rows, columns, long rows, long columns, mixed dims of a 4-d tensor contiguous, permuted,
sliced and channels_last, a 0-d tensor, empty slices, NaN and inf values), plus every method of
reducekit.methods() on whole tensors for each op it serves, method="exact", exact_partial and
exact_round, and the gradients of the differentiable ops. The inputs come from fixed seeds (not
the session's REDUCEKIT_SEED) on the CPU and are copied to the device, so that the CPU and CUDA
corpora see the same data.

Each result is hashed with its dtype, shape and strides; an error is recorded by its type.

    python3 tests/corpus.py --device cpu --out tests/corpus/cpu.json      # record
    python3 tests/corpus.py --device cuda --check tests/corpus/cuda.json  # compare (exit 1 if moved)

tests/test_corpus.py compares the CPU corpus on every run, and the CUDA one on the GPU it was
recorded on.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import zlib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reducekit  # noqa: E402
from helpers import ALL_DTYPES, random_tensor  # noqa: E402
from special_values import call_op  # noqa: E402

# (name, shape, layout, dims patterns): layout makes the strides, dims the reduced sets to try.
SHAPES = [
    ("scalar", (), "contiguous", [None]),
    ("full1", (1,), "contiguous", [None]),
    ("full33", (33,), "contiguous", [None]),
    ("full1025", (1025,), "contiguous", [None]),
    ("full65537", (65537,), "contiguous", [None]),
    ("full2e20", (2**20 + 3,), "contiguous", [None]),
    ("rows", (37, 1029), "contiguous", [[1], [0], None]),
    ("long_rows", (3, 70001), "contiguous", [[1]]),
    ("long_cols", (70001, 3), "contiguous", [[0]]),
    ("cube", (3, 5, 7, 9), "contiguous", [[0, 2], [1, 3], [1, 2, 3], [3], [0]]),
    ("permuted", (3, 5, 7, 9), "permuted", [[0, 2], [3], [1, 2]]),
    ("sliced", (6, 5, 14, 9), "sliced", [[1], [2, 3], None]),
    ("channels_last", (2, 6, 5, 7), "channels_last", [[1], [2, 3], None]),
    ("empty_slices", (4, 0), "contiguous", [[1], [0]]),
    ("specials", (9, 257), "specials", [[1], [0], None]),
]

# Argument variants per op (keyword arguments of reducekit's function).
VARIANTS = {
    "sum": [{}, {"method": "exact"}],
    "var": [{"correction": 1}, {"correction": 0}],
    "std": [{"correction": 1}, {"correction": 0}],
    "var_mean": [{"correction": 1}, {"correction": 0}],
    "std_mean": [{"correction": 1}, {"correction": 0}],
    "linalg.vector_norm": [{"ord": o} for o in (2, 1, 0, math.inf, -math.inf, 3, 0.5)],
}
# Widening dtype= arguments, on the shapes named.
WIDEN = {"sum": {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64,
                 torch.int32: torch.int64},
         "mean": {torch.float16: torch.float32, torch.float32: torch.float64},
         "linalg.vector_norm": {torch.bfloat16: torch.float32}}
WIDEN_SHAPES = ("full65537", "rows", "cube")
# The differentiable ops' gradients, on these dtypes and shapes.
GRAD_OPS = ("sum", "mean", "prod", "amax", "amin", "nansum", "nanmean", "var", "std", "var_mean", "std_mean", "logsumexp",
            "linalg.vector_norm")
GRAD_DTYPES = (torch.float32, torch.float64)
GRAD_SHAPES = ("rows", "cube")


def _seed(*key) -> int:
    return zlib.crc32(repr(key).encode()) & 0x7FFFFFFF


def make_input(name, shape, layout, dtype) -> torch.Tensor:
    """The case's input on the CPU, from its own fixed seed."""
    g = torch.Generator().manual_seed(_seed(name, str(dtype)))
    if layout == "permuted":  # a contiguous tensor of the permuted shape, viewed back
        base = random_tensor(math.prod(shape), dtype, "cpu", g).reshape(shape[3], shape[1], shape[0], shape[2])
        return base.permute(2, 1, 3, 0)
    if layout == "sliced":  # every other index of dims 0 and 2: strides of a larger tensor
        full = random_tensor(math.prod(shape), dtype, "cpu", g).reshape(shape)
        return full[::2, :, ::2]
    x = random_tensor(math.prod(shape), dtype, "cpu", g).reshape(shape)
    if layout == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    if layout == "specials" and dtype.is_floating_point:
        flat = x.reshape(-1)
        pos = torch.randperm(flat.numel(), generator=g)[:24]
        vals = torch.tensor([math.nan, math.inf, -math.inf, -0.0], dtype=torch.float64).repeat(6).to(dtype)
        flat[pos] = vals
    return x


def digest(t) -> str:
    """sha256 of a result: its dtype, shape, strides and bytes (16 hex digits)."""
    if isinstance(t, (tuple, list)):
        return "+".join(digest(u) for u in t)
    h = hashlib.sha256(f"{t.dtype}|{tuple(t.shape)}|{tuple(t.stride())}|".encode())
    flat = t.detach().cpu().reshape(-1).contiguous()
    h.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return h.hexdigest()[:16]


def _methods_cases(device):
    """Every method other than auto on whole tensors, for each op it serves (float results only
    where the method is deterministic for floats)."""
    out = []
    for m in reducekit.methods(device):
        if m.name == "auto":
            continue
        for tok in m.ops:
            op, _, only = tok.partition(":")
            for dtype in ALL_DTYPES:
                if only == "int" and dtype.is_floating_point:
                    continue
                if dtype.is_floating_point and not m.deterministic_float:
                    continue
                for name in ("full33", "full65537", "full2e20"):
                    out.append((op, {"method": m.name}, dtype, name, None, False))
    return out


def cases(device):
    """(op, kwargs, dtype, shape name, dims, keepdim) of every result in the corpus."""
    out = []
    for op in reducekit.OPS:
        for kw in VARIANTS.get(op, [{}]):
            for dtype in ALL_DTYPES:
                for name, _, _, patterns in SHAPES:
                    for dims in patterns:
                        out.append((op, kw, dtype, name, dims, False))
                    if name == "cube":
                        out.append((op, kw, dtype, name, [1, 3], True))
        for dtype, wide in WIDEN.get(op, {}).items():
            for name, _, _, patterns in SHAPES:
                if name in WIDEN_SHAPES:
                    for dims in patterns:
                        out.append((op, {"dtype": wide}, dtype, name, dims, False))
    out += _methods_cases(device)
    return out


def key(op, kw, dtype, name, dims, keepdim) -> str:
    kws = ",".join(f"{k}={str(v).removeprefix('torch.')}" for k, v in sorted(kw.items()))
    return f"{op}({kws})|{str(dtype).removeprefix('torch.')}|{name}|dims={dims}|keepdim={keepdim}"


def _shape(name):
    for s in SHAPES:
        if s[0] == name:
            return s
    raise KeyError(name)


def _run(f):
    try:
        return digest(f())
    except Exception as e:  # noqa: BLE001  (the error's type is part of the behaviour)
        return f"error:{type(e).__name__}"


def record(device) -> dict[str, str]:
    """Every case's digest on `device`."""
    inputs = {}

    def inp(name, dtype):
        if (name, dtype) not in inputs:
            _, shape, layout, _ = _shape(name)
            x = make_input(name, shape, layout, dtype)
            # The same strides on the device: the copy keeps them (as_strided over a like-sized buffer).
            inputs[(name, dtype)] = x.to(device) if x.is_contiguous() else _same_layout(x, device)
        return inputs[(name, dtype)]

    res = {}
    for op, kw, dtype, name, dims, keepdim in cases(device):
        x = inp(name, dtype)
        kws = dict(kw, **({"keepdim": True} if keepdim else {}))
        res[key(op, kw, dtype, name, dims, keepdim)] = _run(lambda: call_op(reducekit, op, x, dims, **kws))
    # exact's intermediate and its rounding.
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        for name, _, _, patterns in SHAPES:
            if name in ("rows", "cube", "full65537", "specials"):
                for dims in patterns:
                    x = inp(name, dtype)
                    w = reducekit.exact_partial(x, dims)
                    res[key("exact_partial", {}, dtype, name, dims, False)] = digest(w)
                    res[key("exact_round", {}, dtype, name, dims, False)] = digest(reducekit.exact_round(w, dtype))
    # Gradients.
    for op in GRAD_OPS:
        for dtype in GRAD_DTYPES:
            for name in GRAD_SHAPES:
                for dims in _shape(name)[3]:
                    res[key(op, {"grad": True}, dtype, name, dims, False)] = _run(lambda: _grad(op, inp(name, dtype), dims))
    return res


def _same_layout(x: torch.Tensor, device) -> torch.Tensor:
    """x on `device` with the same sizes and strides (its storage span copied whole)."""
    span = 1 + sum((s - 1) * st for s, st in zip(x.shape, x.stride()) if s > 0)
    base = x.as_strided((span,), (1,), x.storage_offset()).to(device)
    return base.as_strided(x.shape, x.stride())


def _grad(op, x, dims):
    x = x.detach().clone().requires_grad_(True)
    out = call_op(reducekit, op, x, dims)
    outs = out if isinstance(out, tuple) else (out,)
    g = torch.Generator().manual_seed(_seed(op, "grad"))
    grads = [torch.randn(o.shape, generator=g, dtype=o.dtype).to(o.device) for o in outs]
    torch.autograd.backward(list(outs), grads)
    return x.grad


def device_name(device) -> str:
    return torch.cuda.get_device_name() if str(device).startswith("cuda") else "cpu"


def comparable(rec: dict, now: dict) -> tuple[dict, dict]:
    """The recorded corpus (a loaded JSON document) and `now`, less the gradients when the torch
    version, or on CPU torch's kernel ISA (AVX2, AVX512: torch.backends.cpu.get_cpu_capability()),
    differs from the recorded one: gradients are torch's formulas computed by torch's own ops
    (exp, division, ...), whose last bits change between torch versions and between its CPU
    kernels (logsumexp's gradient moves between AVX2 and AVX512 machines)."""
    recorded = rec["corpus"]
    same_cpu = rec["device"] != "cpu" or rec.get("cpu_capability") == torch.backends.cpu.get_cpu_capability()
    if rec["torch"] != torch.__version__ or not same_cpu:
        recorded = {k: v for k, v in recorded.items() if "grad=True" not in k}
        now = {k: v for k, v in now.items() if "grad=True" not in k}
    return recorded, now


def compare(recorded: dict, now: dict) -> list[str]:
    """The keys whose digests differ, are missing now, or are new."""
    moved = [k for k in recorded if k in now and recorded[k] != now[k]]
    missing = [k for k in recorded if k not in now]
    new = [k for k in now if k not in recorded]
    return [f"moved {k}: {recorded[k]} -> {now[k]}" for k in moved] + [f"missing {k}" for k in missing] + \
        [f"new {k}" for k in new]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--out", help="write the corpus (JSON) here")
    ap.add_argument("--check", help="compare with this recorded corpus; exit 1 if any result moved")
    a = ap.parse_args(argv)
    now = record(a.device)
    doc = {"device": device_name(a.device), "torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
           "results": len(now), "corpus": now}
    if a.out:
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"corpus: {len(now)} results on {doc['device']} -> {a.out}")
    if a.check:
        with open(a.check) as f:
            rec = json.load(f)
        recorded, now = comparable(rec, now)
        diff = compare(recorded, now)
        errors = sum(v.startswith("error:") for v in now.values())
        print(f"corpus: {len(recorded)} recorded ({rec['device']}, torch {rec['torch']}), {len(now)} now "
              f"({doc['device']}, torch {torch.__version__}; {errors} of them errors), {len(diff)} differ")
        for line in diff[:40]:
            print("  " + line)
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
