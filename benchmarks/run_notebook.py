#!/usr/bin/env python3
"""Executes a notebook headless, in place (outputs saved), with the kernel of this Python:

    python benchmarks/run_notebook.py                        # benchmarks/notebooks/tour.ipynb
    python benchmarks/run_notebook.py NOTEBOOK [--out PATH] [--timeout S]

`make notebook` runs the first form. The kernel starts in the notebook's folder (the notebook finds
the committed results from there). It needs nbclient, nbformat and ipykernel (pip install nbclient
nbformat ipykernel); reducekit must be importable by this Python (installed, or PYTHONPATH). A cell
that raises stops the run, and the file is not written. Prints the wall time, cells and file size.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = "reducekit-run-notebook"
TOUR = os.path.join(ROOT, "benchmarks", "notebooks", "tour.ipynb")


def sources_sha(nb) -> str:
    """sha256 over the notebook's code cells' sources: recorded at execution (metadata
    reducekit.executed_sources_sha256), so a cell edited after the run shows as stale."""
    import hashlib

    h = hashlib.sha256()
    for c in nb.cells:
        if c.cell_type == "code":
            h.update(c.source.encode() + b"\0")
    return h.hexdigest()


def execute(path: str, timeout: int = 1800, cwd: str | None = None):
    """The notebook at `path` executed top to bottom (nbclient, this Python's kernel): the notebook
    node, its outputs filled in. Raises nbclient's CellExecutionError on a cell that fails."""
    import json
    import tempfile

    import nbclient
    import nbformat

    nb = nbformat.read(path, as_version=4)
    kernelspec = dict(nb.metadata.get("kernelspec", {}))
    with tempfile.TemporaryDirectory() as tmp:
        # A kernelspec of this interpreter, whatever python3 kernel the machine has installed.
        spec = os.path.join(tmp, "kernels", KERNEL)
        os.makedirs(spec)
        with open(os.path.join(spec, "kernel.json"), "w") as f:
            json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                       "display_name": "Python 3", "language": "python"}, f)
        old = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = tmp + (os.pathsep + old if old else "")
        try:
            client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name=KERNEL,
                                             resources={"metadata": {"path": cwd or os.path.dirname(os.path.abspath(path))}})
            client.execute()
        finally:
            if old is None:
                os.environ.pop("JUPYTER_PATH", None)
            else:
                os.environ["JUPYTER_PATH"] = old
    nb.metadata["kernelspec"] = kernelspec or {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["reducekit"] = {"executed_sources_sha256": sources_sha(nb)}
    return nb


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("notebook", nargs="?", default=TOUR)
    p.add_argument("--out", help="write here instead of in place")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per cell")
    a = p.parse_args(argv)
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat
    except ImportError as e:
        print(f"run_notebook: {e.name} is missing: pip install nbclient nbformat ipykernel", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    nb = execute(a.notebook, a.timeout)
    wall = time.perf_counter() - t0
    nb.metadata["reducekit"].update(wall_s=round(wall, 1), python=sys.version.split()[0])
    out = a.out or a.notebook
    nbformat.write(nb, out)
    cells = sum(c.cell_type == "code" for c in nb.cells)
    print(f"executed {cells} code cells of {a.notebook} in {wall:.0f} s; wrote {out} ({os.path.getsize(out) / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
