"""The bits corpus (tests/corpus.py): every result on the corpus's fixed inputs has the bits it was
recorded with. The CPU corpus is checked everywhere; the CUDA corpus on the GPU model it was
recorded on (other GPUs may pick other grids), gradients only under the torch version recorded. A change that moves bits on purpose re-records the
corpus in the same commit and says why."""
from __future__ import annotations

import json
import os

import pytest
import torch

import corpus

HERE = os.path.dirname(os.path.abspath(__file__))


def _check(device, path):
    with open(path) as f:
        rec = json.load(f)
    if rec["device"] != corpus.device_name(device):
        pytest.skip(f"corpus {os.path.basename(path)} was recorded on {rec['device']}, this is {corpus.device_name(device)}")
    recorded, now = corpus.comparable(rec, corpus.record(device))
    diff = corpus.compare(recorded, now)
    assert not diff, f"{len(diff)} of {len(rec['corpus'])} corpus results differ:\n" + "\n".join(diff[:30])


def test_cpu_corpus():
    _check("cpu", os.path.join(HERE, "corpus", "cpu.json"))


@pytest.mark.cuda
def test_cuda_corpus():
    path = os.path.join(HERE, "corpus", "cuda.json")
    if not os.path.exists(path):
        pytest.skip("no CUDA corpus recorded")
    _check("cuda", path)


def test_corpus_detects_a_moved_bit():
    """The comparison bites: one flipped bit in one result is reported, as are a missing and a new case."""
    x = torch.arange(5, dtype=torch.float32)
    y = x.clone()
    y.view(torch.int32)[2] ^= 1
    rec = {"a": corpus.digest(x), "b": corpus.digest(x)}
    now = {"a": corpus.digest(y), "c": corpus.digest(x)}
    diff = corpus.compare(rec, now)
    assert [d.split()[0] for d in diff] == ["moved", "missing", "new"]
    # strides are part of the result
    assert corpus.digest(torch.zeros(2, 3)) != corpus.digest(torch.zeros(3, 2).t())


# Operators whose CPU results are bitwise the GPU's on the corpus's inputs (issue 21, item 2), read
# against the committed CUDA corpus, so that the CPU is checked without a GPU. The var family runs
# one Welford (engine/reduce_ops.h) on both backends; the products nvcc fuses are fused on the CPU
# too (red::m_fused). Left out: results that hold a NaN (the specials input, and a correction of 1
# over one value: 0/0), whose sign and payload bits the two backends' hardware sets differently.
CPU_EQUALS_CUDA = ("var(", "std(", "var_mean(", "std_mean(")


def _nan_free(key):
    shape, variant = key.split("|")[2], key.split("|")[0]
    return shape != "specials" and not (shape in ("full1", "scalar") and "correction=1" in variant)


def test_cpu_equals_cuda_corpus():
    """The CPU's var, std, var_mean and std_mean results equal the CUDA corpus's bit for bit (every
    dtype, layout and reduced set the corpus has; gradients, torch's own formulas, apart)."""
    with open(os.path.join(HERE, "corpus", "cuda.json")) as f:
        cuda = json.load(f)["corpus"]
    now = corpus.record("cpu")
    keys = [k for k in now if k.startswith(CPU_EQUALS_CUDA) and "grad=True" not in k and _nan_free(k) and k in cuda]
    assert len(keys) > 2000, "the corpus lost its var-family cases"
    differ = [k for k in keys if now[k] != cuda[k]]
    assert not differ, f"{len(differ)} of {len(keys)} var-family results differ from CUDA's:\n" + "\n".join(differ[:20])
