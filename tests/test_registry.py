"""The method registry: one source of truth, complete, and consistent with the README."""
import pathlib
import re

import reducekit
from reducekit import _C

GALLERY = ["atomic_global", "atomic_block", "tree_interleaved", "tree_strided", "tree_sequential", "first_add",
           "warp_unroll", "full_unroll", "shuffle", "butterfly", "cg", "cg_unroll2", "coarsened", "warp_atomic",
           "block_atomic", "two_pass", "vectorized", "host_final", "lock", "cub_block", "cub_device"]
ATOMIC_FINISH = {"atomic_global", "atomic_block", "warp_atomic", "block_atomic", "lock", "cub_block"}


def test_every_gallery_method_is_registered():
    names = [m.name for m in reducekit.methods()]
    assert len(names) == len(set(names)), "duplicate method names"
    for name in GALLERY + ["auto", "single_pass", "exact"]:
        assert name in names, f"{name} missing from the registry"


def test_metadata_complete():
    dtypes = set(_C.dtypes())
    assert dtypes == {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"}
    for m in reducekit.methods():
        assert m.name and m.idea and m.source, m
        assert set(m.devices) <= {"cpu", "cuda"} and m.devices, m
        assert set(m.dtypes) == dtypes, m
        assert m.launches >= 1, m
        assert m.deterministic in ("yes", "integers only"), m
        # integer sums are exact whatever the order
        assert m.deterministic_int


def test_metadata_says_what_is_true():
    by = {m.name: m for m in reducekit.methods()}
    assert by["auto"].devices == ("cpu", "cuda") and by["exact"].devices == ("cpu", "cuda")
    for name in GALLERY + ["single_pass"]:
        assert by[name].devices == ("cuda",), name
    for name in ATOMIC_FINISH:
        assert not by[name].deterministic_float, f"{name} finishes with float atomics: order varies"
    for name in set(GALLERY) - ATOMIC_FINISH:
        assert by[name].deterministic_float, name
    assert by["host_final"].host_sync
    assert [m.name for m in reducekit.methods() if m.host_sync] == ["host_final"]
    assert by["single_pass"].launches == 1 and by["auto"].launches == 1


def test_python_and_cpp_agree():
    assert [d["name"] for d in _C.methods()] == [m.name for m in reducekit.methods()]
    assert reducekit.method("two_pass").name == "two_pass"


def test_readme_methods_table_matches_registry():
    readme = (pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme.split("## Methods", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|", table, flags=re.M)
    assert rows == [m.name for m in reducekit.methods()], "README methods table out of sync with csrc/core/methods.h"
    for m in reducekit.methods():
        row = re.search(rf"^\| `{m.name}` \|(.*)$", table, flags=re.M).group(1)
        assert m.deterministic in row and f"| {m.launches} |" in row, f"README row of {m.name} disagrees: {row}"
        assert f"| {', '.join(m.ops)} |" in row, f"README ops of {m.name} disagree with csrc/core/methods.h: {row}"
