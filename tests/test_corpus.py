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
