"""The source tree's checks. Layers (.ci/check_layers.py): includes point downward only; the check
passes on the tree, and fails on a copy with an upward include, a file in no layer, or a torch
header in a torch-free layer. Parts (.ci/check_parts.py): every engine family has its file per
input-dtype part; the check fails on a copy missing one, naming the wrong part, or with a stray."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, ".ci", "check_layers.py")


def run(csrc):
    return subprocess.run([sys.executable, CHECK, csrc], capture_output=True, text=True)


def test_tree_has_no_upward_include():
    r = run(os.path.join(ROOT, "csrc"))
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("where,text,expect", [
    ("engine/plan.h", '#include "cuda/launchers.h"\n', "upward"),
    ("core/methods.h", '#include "engine/plan.h"\n', "upward"),
    ("cuda/block/common.cuh", '#include "cuda/engine/reduce.cuh"\n', "upward"),
    ("engine/reduce_ops.h", "#include <ATen/ATen.h>\n", "torch headers"),
    ("engine/plan.h", '#include "engine/no_such.h"\n', "not a file"),
])
def test_check_bites(tmp_path, where, text, expect):
    csrc = tmp_path / "csrc"
    shutil.copytree(os.path.join(ROOT, "csrc"), csrc, ignore=shutil.ignore_patterns("*.o", "*.so"))
    with open(csrc / where, "a") as f:
        f.write(text)
    r = run(str(csrc))
    assert r.returncode == 1 and expect in r.stdout, r.stdout


def test_file_in_no_layer(tmp_path):
    csrc = tmp_path / "csrc"
    shutil.copytree(os.path.join(ROOT, "csrc"), csrc)
    (csrc / "stray.h").write_text("#pragma once\n")
    r = run(str(csrc))
    assert r.returncode == 1 and "in no layer" in r.stdout


CHECK_PARTS = os.path.join(ROOT, ".ci", "check_parts.py")


def test_every_family_part_has_its_file():
    r = subprocess.run([sys.executable, CHECK_PARTS, os.path.join(ROOT, "csrc")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("change,expect", [
    ("remove extrema_wide.cu", "missing: cuda/engine/parts/extrema_wide.cu"),
    ("rename sums_half.cu sums_float16.cu", "stray: cuda/engine/parts/sums_float16.cu"),
    ("write moments_f64.cu RK_FAMILY_PART(Moments, F32)", "does not say RK_FAMILY_PART(Moments, F64)"),
])
def test_parts_check_bites(tmp_path, change, expect):
    csrc = tmp_path / "csrc"
    shutil.copytree(os.path.join(ROOT, "csrc"), csrc, ignore=shutil.ignore_patterns("*.o", "*.so"))
    parts = csrc / "cuda" / "engine" / "parts"
    verb, name, *rest = change.split(" ", 2)
    if verb == "remove":
        (parts / name).unlink()
    elif verb == "rename":
        (parts / name).rename(parts / rest[0])
    else:
        (parts / name).write_text('#include "cuda/engine/family.cuh"\n' + rest[0] + "\n")
    r = subprocess.run([sys.executable, CHECK_PARTS, str(csrc)], capture_output=True, text=True)
    assert r.returncode == 1 and expect in r.stdout, r.stdout
