"""reducekit.distributed over real process groups: 1, 2, 3 and 4 gloo processes (CPU), and NCCL
with one process (the `cuda` tests).

Each world size is one spawn of tests/dist_worker.py processes (bounded: 240 s, then killed) that
runs every check on every rank: the plain process-group API and DTensor inputs (1-D and 2-D meshes;
Shard, Replicate, Partial inputs) against single-process reducekit on the full tensor, for sum,
mean, amax, amin, vector_norm, var_mean, logsumexp, argmax, count_nonzero and method="exact";
exact bit for bit over uneven shards and shards that are empty on some rank; and the errors. The
tests below read the verdicts, one test per world size and group of checks.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
import torch

import reducekit
import reducekit.distributed as rd
from helpers import BASE_SEED

HERE = os.path.dirname(os.path.abspath(__file__))
# The workers import the reducekit this process imported (installed, or a source tree with its
# built extension): the repository root itself holds no built extension in a clean clone.
PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(reducekit.__file__)))
TIMEOUT_S = 180
_RUNS: dict = {}

pytestmark = pytest.mark.skipif(not torch.distributed.is_available(), reason="torch built without torch.distributed")


def spawn(world: int, device: str = "cpu", only: str | None = None) -> dict:
    """Runs `world` worker processes; returns {"rows": every rank's verdicts, "tables": per rank}."""
    key = (world, device, only)
    if key not in _RUNS:
        try:
            _RUNS[key] = _spawn(world, device, only)
        except Exception as e:  # noqa: BLE001  (a failed or hung spawn fails every test that reads it, once)
            _RUNS[key] = e
    if isinstance(_RUNS[key], Exception):
        raise _RUNS[key]
    return _RUNS[key]


def _spawn(world: int, device: str, only: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, REDUCEKIT_SEED=str(BASE_SEED), NCCL_NVLS_ENABLE="0", OMP_NUM_THREADS="1",
                   TORCH_SYMM_MEM_DISABLE_MULTICAST="1", NVSHMEM_DISABLE_NVLS="1",
                   PYTHONPATH=os.pathsep.join([PKG_DIR, HERE, os.environ.get("PYTHONPATH", "")]))
        if only:
            env["REDUCEKIT_DIST_ONLY"] = only
        init = os.path.join(tmp, "init")
        procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "dist_worker.py"), str(r), str(world), init, tmp, device],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in range(world)]
        deadline = time.monotonic() + TIMEOUT_S
        outs = []
        for p in procs:
            try:
                out, _ = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                for q in procs:
                    q.kill()
                    q.wait()
                raise AssertionError(f"{world} {device} worker processes did not finish in {TIMEOUT_S} s (killed)") from None
            outs.append(out)
        res = {"rows": [], "tables": []}
        for r, (p, out) in enumerate(zip(procs, outs)):
            path = os.path.join(tmp, f"rank{r}.json")
            if p.returncode != 0 or not os.path.exists(path):
                raise AssertionError(f"rank {r} of {world} exited with {p.returncode}:\n{out[-4000:]}")
            with open(path) as f:
                got = json.load(f)
            res["rows"] += [dict(row, rank=r) for row in got["rows"]]
            res["tables"].append(got["table"])
    return res


def verdict(res: dict, group: str):
    rows = [r for r in res["rows"] if r["group"] == group]
    assert rows, f"no checks of group {group!r} ran"
    bad = [r for r in rows if not r["ok"]]
    names = sorted({r["name"] for r in rows})
    lines = [f"rank {r['rank']}: {r['name']}: {r['detail']}" for r in bad[:12]]
    assert not bad, f"{len(bad)} of {len(rows)} checks failed ({len(names)} distinct):\n" + "\n".join(lines)
    return names


WORLDS = [2, 3, 4]


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("group", ["plain", "exact", "dtensor", "errors", "collectives"])
def test_gloo(world, group):
    """Every check of `group` passed on every rank of a `world`-process gloo run."""
    names = verdict(spawn(world), group)
    assert len(names) >= {"plain": 60, "exact": 40, "dtensor": 100, "errors": 35, "collectives": 34}[group], len(names)


def test_world_size_table():
    """exact's bits are the same at world sizes 1 to 4 (and equal the single-process
    reducekit.sum(full, method="exact")), on float32 1003 x 77 of spread magnitudes sharded with
    Shard(0); torch's DTensor sum of the same data changes its last bits with the world size."""
    rows = {}
    for w in [1] + WORLDS:
        res = spawn(w)
        t = res["tables"][0]
        assert t is not None, [r for r in res["rows"] if r["group"] == "table"]
        assert all(u == t for u in res["tables"]), f"ranks disagree at world size {w}: {res['tables']}"
        rows[w] = t
    lines = ["| world size | " + " | ".join(str(w) for w in rows) + " |", "|---|" + "---|" * len(rows)]
    for k, label in (("torch", "torch.sum of the DTensor"), ("auto", "reducekit.sum of the DTensor"),
                     ("exact", 'reducekit.sum(DTensor, method="exact")'), ("plain_exact", 'reducekit.distributed.sum(shard, method="exact")')):
        lines.append(f"| {label} | " + " | ".join(f"{rows[w][k]['value']!r} ({rows[w][k]['hex']})" for w in rows) + " |")
    lines.append("| exact words' headroom (doublings of the world size left) | " + " | ".join(str(rows[w]["headroom"]) for w in rows) + " |")
    print("\n" + "\n".join(lines) + f"\nfsum (float64): {rows[1]['fsum']!r}; single-process exact: {rows[1]['single_exact']}")
    single = rows[1]["single_exact"]
    for w, t in rows.items():
        assert t["exact"] == single and t["plain_exact"] == single, f"world size {w}: {t} vs single-process {single}"
    # the data (fixed seed) makes torch's float partial sums round differently at some world size
    assert len({t["torch"]["hex"] for t in rows.values()}) > 1, f"torch's DTensor sum did not change: {rows}"


def test_uninitialized_process_group():
    assert not torch.distributed.is_initialized()
    with pytest.raises(RuntimeError, match=r"reducekit\.distributed\.sum: the default process group is not initialized; "
                                           r"call torch\.distributed\.init_process_group"):
        rd.sum(torch.ones(3))
    with pytest.raises(RuntimeError, match="not initialized"):
        rd.var_mean(torch.ones(3))


def test_exact_headroom():
    """Limbs are < 2^32, so 2^31 partials add without overflowing an int64 and one more might."""
    assert rd.EXACT_MAX_PARTIALS == 2**31
    assert [rd.exact_headroom(w) for w in (1, 2, 3, 4, 8)] == [31, 30, 29, 29, 28]
    assert (2**31) * (2**32 - 1) <= 2**63 - 1 < (2**31 + 1) * (2**32 - 1)
    rd.check_exact_headroom(2**31)
    with pytest.raises(ValueError, match=r"method='exact' over 2147483649 ranks: .* at most 2147483648 \(2\^31\)"):
        rd.check_exact_headroom(2**31 + 1)
    # the words of one shard really are normalized limbs below 2^32: the bound the headroom rests on
    w = reducekit.exact_partial(torch.randn(1001, dtype=torch.float64) * 1e300)
    assert int(w[:-4].max()) < 2**32 and int(w[:-4].min()) >= 0


@pytest.mark.cuda
def test_nccl_world_size_one():
    """One GPU: NCCL with one rank, the plain API and the DTensor path on cuda, every check."""
    res = spawn(1, "cuda")
    for group in ("plain", "exact", "dtensor", "errors", "collectives"):
        verdict(res, group)
    t = res["tables"][0]
    assert t["exact"] == t["single_exact"] == t["plain_exact"], t


@pytest.mark.cuda
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="fewer than 2 GPUs")
def test_nccl_two_gpus():
    """Two GPUs, one NCCL process each: every check, and exact's bits equal to one GPU's (and to
    world size 1 on this machine) where torch's DTensor sum of the same data may move."""
    res = spawn(2, "cuda")
    for group in ("plain", "exact", "dtensor", "errors", "collectives"):
        verdict(res, group)
    t2, t1 = res["tables"][0], spawn(1, "cuda")["tables"][0]
    assert all(t == t2 for t in res["tables"]), res["tables"]
    print(f"\nNCCL, 2 GPUs vs 1: torch.sum of the DTensor {t2['torch']} vs {t1['torch']}; reducekit exact "
          f"{t2['exact']} / plain {t2['plain_exact']} vs single-GPU {t1['single_exact']}")
    assert t2["exact"] == t2["plain_exact"] == t1["single_exact"] == t2["single_exact"], (t2, t1)
