"""The tutorial notebook (benchmarks/notebooks/tour.ipynb, issue 23) is executed, never stale: the
committed file holds one top-to-bottom execution of its current cells, without errors, under 3 MB;
its code calls reducekit's public API only; and its cells still execute, on this machine's device
(CPU in CI), against the current package."""
import importlib.util
import os
import re

import pytest

import reducekit
import reducekit.bench

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOUR = os.path.join(ROOT, "benchmarks", "notebooks", "tour.ipynb")
nbformat = pytest.importorskip("nbformat")


def _runner():
    spec = importlib.util.spec_from_file_location("run_notebook", os.path.join(ROOT, "benchmarks", "run_notebook.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_committed_notebook_is_one_execution_of_its_current_cells():
    nb = nbformat.read(TOUR, as_version=4)
    cells = _code_cells(nb)
    assert os.path.getsize(TOUR) < 3e6
    assert [c.execution_count for c in cells] == list(range(1, len(cells) + 1)), "not one top-to-bottom run"
    errors = [o for c in cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors[0]
    # Outputs of these sources: a cell edited after the run (outputs stale) changes the hash.
    recorded = nb.metadata.get("reducekit", {}).get("executed_sources_sha256")
    assert recorded == _runner().sources_sha(nb), "cells changed since the committed execution: run `make notebook`"
    images = sum("image/png" in o.get("data", {}) for c in cells for o in c.outputs)
    assert images >= 5, f"{images} plots in the committed outputs"


def test_notebook_calls_the_public_api_only():
    nb = nbformat.read(TOUR, as_version=4)
    src = "\n".join(c.source for c in _code_cells(nb))
    used = set(re.findall(r"\breducekit\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?", src))
    assert used, "the notebook calls no reducekit function"
    bad = []
    for name, attr in used:
        if name == "bench":
            if attr and attr not in reducekit.bench.__all__:
                bad.append(f"reducekit.bench.{attr}")
        elif name not in reducekit.__all__:
            bad.append(f"reducekit.{name}")
    assert not bad, f"not in the public API (__all__): {sorted(bad)}"


def test_notebook_cells_execute(tmp_path, monkeypatch):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # The kernel imports the reducekit these tests import.
    where = os.path.dirname(os.path.dirname(os.path.abspath(reducekit.__file__)))
    monkeypatch.setenv("PYTHONPATH", where + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = _runner().execute(TOUR, timeout=600)
    cells = _code_cells(nb)
    assert all(c.execution_count for c in cells)
    assert not [o for c in cells for o in c.outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in cells[-1].outputs)
    assert "notebook executed in" in text
