"""The CPU backend's parallel loops under load.

A parallel region over tiny work costs a whole scheduler slice (about 8 ms) when another process
keeps every core busy: the second thread is not running, and the region waits for it. Before
csrc/cpu/parallel_cpu.h, reducekit.linalg.vector_norm of a (10, 775) float32 tensor over dim 0 took
about 8,000 us under load with two threads (35 us without load; torch: about 100 us). Every loop of
csrc/cpu now goes through parallel_tasks, which starts a region only when each thread has 32768
values (torch's GRAIN_SIZE) to read.

The tests are deterministic: small reductions that reach every CPU loop kind (operator rows and
columns, sum rows and columns, exact rows and rounding) start no parallel
region (the backend counts the regions it starts), large ones do, and no source but
parallel_cpu.h calls at::parallel_for. Timing under load is not a test: whether a region waits a
slice depends on where the scheduler put the threads, so the wait shows in some processes and not
in others. benchmarks/cpu_under_load.py times these cases beside torch with both cores busy.
"""
from __future__ import annotations

import pathlib
import re

import pytest
import torch

import reducekit

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_cpu_loop_has_a_grain():
    """Only csrc/cpu/parallel_cpu.h calls at::parallel_for (or opens an OpenMP region)."""
    bad = []
    for path in sorted((ROOT / "csrc").rglob("*")):
        if path.suffix not in (".h", ".cpp", ".cu", ".cuh") or path.name == "parallel_cpu.h":
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if re.search(r"\bparallel_for\s*\(|\bparallel_reduce\s*\(|#\s*pragma\s+omp", code):
                bad.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not bad, "parallel loops without parallel_tasks' grain:\n" + "\n".join(bad)


def _cases():
    g = torch.Generator().manual_seed(7)

    def x(*shape, dtype=torch.float32):
        return (torch.randn(*shape, generator=g) + 1.0).to(dtype)
    return [
        ("vector_norm (10, 775) dim 0 (operator columns)", lambda a: reducekit.linalg.vector_norm(a, 2, 0), x(10, 775)),
        ("amax (10, 775) dim 0 (operator columns)", lambda a: reducekit.amax(a, 0), x(10, 775)),
        ("mean (7, 3000) dim 0 (operator columns)", lambda a: reducekit.mean(a, 0), x(7, 3000)),
        ("var_mean (64, 100) dim 0 (operator columns)", lambda a: reducekit.var_mean(a, 0), x(64, 100)),
        ("logsumexp (300, 40) dim 1 (operator rows)", lambda a: reducekit.logsumexp(a, 1), x(300, 40)),
        ("sum (300, 40) dim 1 (sum rows)", lambda a: reducekit.sum(a, 1), x(300, 40)),
        ("sum (40, 300) dim 0 (sum columns)", lambda a: reducekit.sum(a, 0), x(40, 300)),
        ("sum exact (50, 300) dim 1 (exact rows)", lambda a: reducekit.sum(a, 1, method="exact"), x(50, 300)),
        ("exact_round of 50 rows", lambda a: reducekit.exact_round(a, torch.float32), reducekit.exact_partial(x(50, 3), 1)),
    ]


def _large_cases():
    """Enough work for each thread to start a region: sum rows (2^20-value rows, chunked), operator
    columns, exact rows, columns of two chunks, the rounding of 300 rows."""
    g = torch.Generator().manual_seed(8)
    big = torch.randn(4, 1 << 20, generator=g)
    return [("sum (4, 2^20) dim 1", lambda: reducekit.sum(big, 1)),
            ("vector_norm (1024, 4096) dim 0", lambda: reducekit.linalg.vector_norm(big.reshape(1024, 4096), 2, 0)),
            ("sum exact (4, 2^20) dim 1", lambda: reducekit.sum(big, 1, method="exact")),
            ("sum (70000, 2) dim 0 (columns in two chunks, then their combine)", lambda: reducekit.sum(big[0, :140000].reshape(70000, 2), 0)),
            ("exact_round of 300 rows", lambda: reducekit.exact_round(reducekit.exact_partial(big[:, :900].reshape(300, 12), 1), torch.float32))]


@pytest.mark.skipif(torch.get_num_threads() < 2, reason="one intra-op thread: no parallel region is ever started")
def test_small_reductions_start_no_parallel_region():
    """Deterministic: the CPU backend's region counter does not move over any small case, and does
    over large ones (so the counter counts)."""
    started = {}
    for name, f, a in _cases():
        before = reducekit._C.cpu_parallel_regions()
        f(a)
        started[name] = reducekit._C.cpu_parallel_regions() - before
    assert not any(started.values()), f"small reductions started parallel regions: { {k: v for k, v in started.items() if v} }"
    for name, f in _large_cases():
        before = reducekit._C.cpu_parallel_regions()
        f()
        assert reducekit._C.cpu_parallel_regions() > before, f"{name} started no parallel region"
