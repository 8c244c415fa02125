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


# Results whose CPU bits are the GPU's on the corpus's inputs (issue 21, item 2), read against the
# committed CUDA corpus, so that the CPU is checked without a GPU:
#  - the var family on NaN-free results: one Welford (engine/reduce_ops.h) on both backends, the
#    products nvcc fuses fused on the CPU too (red::m_fused);
#  - every operator's float16 and bfloat16 results, those holding NaN included (a 16-bit NaN is
#    0x7fff on both: cpu/dispatch_cpu.h cuda_nan), but sum with dtype=float32 (the CPU's own sum
#    kernels keep their order for it);
#  - float32's amax, amin, aminmax, prod and vector_norm of ord inf and -inf, NaN included
#    (accumulated in float32: 0x7fffffff on both).
# Left out: gradients (torch's own formulas), and NaN results accumulated in float64, whose sign
# and payload the GPU's float64 arithmetic keeps and the CPU does not follow.
VAR_FAMILY = ("var(", "std(", "var_mean(", "std_mean(")
F32_OPS = ("amax(", "amin(", "aminmax(", "prod(", "linalg.vector_norm(ord=inf)", "linalg.vector_norm(ord=-inf)")


def _nan_free(key):
    shape, variant = key.split("|")[2], key.split("|")[0]
    return shape != "specials" and not (shape in ("full1", "scalar") and "correction=1" in variant)


def _cpu_equals_cuda(key):
    op, dtype = key.split("|")[:2]
    if "grad=True" in op:
        return False
    if op.startswith(VAR_FAMILY) and _nan_free(key):
        return True
    if dtype in ("float16", "bfloat16"):
        return not op.startswith("sum(dtype=")
    return dtype == "float32" and op.startswith(F32_OPS)


def test_cpu_equals_cuda_corpus():
    """The CPU's results equal the CUDA corpus's bit for bit on the keys _cpu_equals_cuda names
    (every dtype, layout and reduced set the corpus has for them). On the build before the NaN rule
    (the quiet NaN for every float result) 150 of the 16-bit and 18 of the float32 keys differed."""
    with open(os.path.join(HERE, "corpus", "cuda.json")) as f:
        cuda = json.load(f)["corpus"]
    now = corpus.record("cpu")
    keys = [k for k in now if k in cuda and _cpu_equals_cuda(k)]
    assert len(keys) > 3500, "the corpus lost cases"
    assert sum("|specials|" in k for k in keys) > 180, "the corpus lost its NaN and inf inputs"
    differ = [k for k in keys if now[k] != cuda[k]]
    assert not differ, f"{len(differ)} of {len(keys)} results differ from CUDA's:\n" + "\n".join(differ[:20])
