"""Compares two runs of the benchmarks by their same-run ratios to torch (torch time / reducekit
time, per case, dtype, op or method, and mode): the "no speed change" check of a refactor.

    python benchmarks/compare_ratios.py BEFORE_DIR AFTER_DIR

Each directory holds any of results_ops.json (bench_ops.py), results_dims.json (bench.py --dims),
results.json (bench.py: the whole-tensor sum, torch.sum / each method) and results_exact.json
(bench_exact.py: torch.sum / exact and torch.sum / auto).
Prints, per file: the number of ratios, the median change, how many are within +-3%, the worst and
the best.
"""
from __future__ import annotations

import json
import os
import statistics
import sys


def ops_ratios(path: str) -> dict:
    out = {}
    for r in json.load(open(path))["rows"]:
        for mode in ("graph", "eager"):
            t = r.get(f"{mode}_us") or {}
            if t.get("reducekit") and t.get("torch"):
                out[(r["case"], r["dtype"], r["op"], mode)] = t["torch"] / t["reducekit"]
    return out


def dims_ratios(path: str) -> dict:
    out = {}
    for r in json.load(open(path))["rows"]:
        if r.get("torch_us") and r.get("reducekit_us"):
            out[(r["case"], r["dtype"], str(r.get("sum_dtype")), r["mode"])] = r["torch_us"] / r["reducekit_us"]
    return out


def sum_ratios(path: str) -> dict:
    rows = json.load(open(path))["rows"]
    torch_us = {(r["dtype"], r["n"], r["mode"]): r["time_us"] for r in rows if r["method"] == "torch.sum"}
    return {(r["dtype"], r["n"], r["method"], r["mode"]): torch_us[(r["dtype"], r["n"], r["mode"])] / r["time_us"]
            for r in rows if r["method"] != "torch.sum" and r.get("time_us") and (r["dtype"], r["n"], r["mode"]) in torch_us}


def exact_ratios(path: str) -> dict:
    out = {}
    for r in json.load(open(path))["rows"]:
        for mode in ("graph", "eager"):
            t = r.get(f"{mode}_us") or {}
            for m in ("exact", "auto"):
                if t.get(m) and t.get("torch.sum"):
                    out[(r["dtype"], r["n"], r.get("data"), m, mode)] = t["torch.sum"] / t[m]
    return out


def compare(name: str, before: dict, after: dict) -> str:
    keys = sorted(set(before) & set(after))
    if not keys:
        return f"{name}: no common ratios"
    ch = {k: after[k] / before[k] - 1 for k in keys}
    worst = min(ch, key=ch.get)
    best = max(ch, key=ch.get)
    within = sum(abs(v) <= 0.03 for v in ch.values())
    return (f"{name}: {len(keys)} ratios to torch; after/before median {statistics.median(ch.values()):+.1%}, within +-3%: "
            f"{within}/{len(keys)}; worst {ch[worst]:+.1%} {worst}; best {ch[best]:+.1%} {best}")


def main(argv: list[str]) -> int:
    before, after = argv[1], argv[2]
    for fname, fn in (("results_ops", ops_ratios), ("results_dims", dims_ratios), ("results", sum_ratios),
                      ("results_exact", exact_ratios)):
        b, a = os.path.join(before, fname + ".json"), os.path.join(after, fname + ".json")
        if os.path.exists(b) and os.path.exists(a):
            print(compare(fname, fn(b), fn(a)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
