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


# The CPU's bits are the GPU's on the corpus's inputs (issue 21, item 2), read against the committed
# CUDA corpus, so that the CPU is checked without a GPU: every result but these.
#  - Gradients: torch's own formulas.
#  - vector_norm of ord 3 and 0.5: the CPU's pow is not the GPU's. logsumexp but of float64: the
#    GPU's float32 exponential is the hardware's ex2.approx. (float64 logsumexp is checked since
#    session 46: CUDA's exp copied, and the rescale-and-add of two partial sums fused as nvcc fuses it.)
#  - sum of a whole float64 tensor (dim=None, no dtype=): CUDA's single_pass, whose order follows
#    its grid; the CPU's whole-tensor kernel has its own. (Since session 46 float64 sums over dims,
#    dtype= widened sums and float64 nansum take the engine's order on the CPU too.)
#  - NaN results that come through float64 arithmetic (sums, means, products of float64, the var
#    family): the GPU's float64 arithmetic keeps a NaN's sign and payload, which the CPU does not
#    follow (cpu/dispatch_cpu.h cuda_nan). Every 16-bit NaN, and float32's accumulated in float32,
#    are checked.
# What makes the rest equal: one struct per operator on both backends (engine/reduce_ops.h), the
# products nvcc fuses fused on the CPU too (red::m_fused: the var family's Welford, vector_norm's
# x * x + a, logsumexp's rescale-and-add), CUDA's float64 exp copied (nvexp), one NaN per result type
# (cuda_nan).
OWN_MATH = ("linalg.vector_norm(ord=3)", "linalg.vector_norm(ord=0.5)")
NAN_IN_FLOAT64 = ("sum()", "nansum()", "mean()", "nanmean()", "var(", "std(", "var_mean(", "std_mean(")


def _holds_nan(key):
    op, _, shape = key.split("|")[:3]
    return shape == "specials" or (shape in ("full1", "scalar") and "correction=1" in op)


def _cpu_equals_cuda(key):
    op, dtype = key.split("|")[:2]
    if "grad=True" in op or op.startswith(OWN_MATH) or (op.startswith("logsumexp(") and dtype != "float64"):
        return False
    if op == "sum()" and dtype == "float64" and "|dims=None|" in key:
        return False
    if _holds_nan(key) and dtype in ("float32", "float64"):
        return not (op.startswith(NAN_IN_FLOAT64) or (op == "prod()" and dtype == "float64"))
    return True


def test_cpu_equals_cuda_corpus():
    """The CPU's results equal the CUDA corpus's bit for bit on every key _cpu_equals_cuda names
    (every op, dtype, layout and reduced set the corpus has, but the exceptions above): 8,460 on
    the corpus of session 46. Session 44's build differs on 163 of session 45's 8,346 (NaN bits of
    16-bit and float32 results, float64's 2-norms), the build with the NaN rule alone on 13 (the
    2-norms); session 45's build on 47 of these 8,460 (float64 sums and nansums over dims, dtype=
    widened sums, float64 nansums of whole tensors, float64 logsumexp)."""
    with open(os.path.join(HERE, "corpus", "cuda.json")) as f:
        cuda = json.load(f)["corpus"]
    now = corpus.record("cpu")
    keys = [k for k in now if k in cuda and _cpu_equals_cuda(k)]
    assert len(keys) > 8000, "the corpus lost cases"
    assert sum("|specials|" in k for k in keys) > 700, "the corpus lost its NaN and inf inputs"
    differ = [k for k in keys if now[k] != cuda[k]]
    assert not differ, f"{len(differ)} of {len(keys)} results differ from CUDA's:\n" + "\n".join(differ[:20])
