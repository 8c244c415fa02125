"""The benchmark command and notebook API, on whatever device is present (CPU in CI)."""
import json
import os
import subprocess
import sys

import pytest

import reducekit
from reducekit import bench

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_benchmark_rows_cpu():
    rows = reducekit.benchmark(dtypes=["float32", "int8"], sizes=[1000, 4096], device="cpu", progress=False,
                               as_dataframe=False, budget_s=0.01)
    assert {r["method"] for r in rows} == {"torch.sum", "auto"}
    assert {(r["dtype"], r["n"]) for r in rows} == {("float32", 1000), ("float32", 4096), ("int8", 1000), ("int8", 4096)}
    for r in rows:
        assert r["time_us"] > 0 and r["gbps"] > 0 and r["mode"] == "eager"
        assert r["speedup"] == pytest.approx(next(b["time_us"] for b in rows if b["method"] == "torch.sum"
                                                  and b["dtype"] == r["dtype"] and b["n"] == r["n"]) / r["time_us"], rel=1e-2)


def test_benchmark_dataframe():
    pd = pytest.importorskip("pandas")
    df = reducekit.benchmark(dtypes=["float64"], sizes=[512], device="cpu", progress=False, budget_s=0.01)
    assert isinstance(df, pd.DataFrame) and set(df["method"]) == {"torch.sum", "auto"}
    assert "note" in df.attrs["env"]


def test_reports_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    run = bench.benchmark_run(dtypes=["float32"], sizes=[256, 2048], device="cpu", progress=False, budget_s=0.01)
    paths = bench.write_results(run, str(tmp_path))
    names = {os.path.basename(p) for p in paths}
    assert {"results.md", "results.json", "results.csv", "bandwidth_float32.png", "speedup_float32.png"} <= names
    md = (tmp_path / "results.md").read_text()
    assert "### float32: time per call (us)" in md and "| N | torch.sum | auto |" in md
    assert "CPU tensors" in md
    assert json.loads((tmp_path / "results.json").read_text())["rows"][0]["dtype"] == "float32"
    for p in paths:
        if p.endswith(".png"):
            assert os.path.getsize(p) > 5000
    fig = reducekit.plot(run, kind="speedup", dtype="float32")
    assert fig.axes
    with pytest.raises(ValueError, match="kind must be"):
        reducekit.plot(run, kind="pie")


def test_command_line_without_gpu(tmp_path):
    if reducekit._C.cuda_built:
        import torch

        if torch.cuda.is_available():
            pytest.skip("the GPU sweep is run by benchmarks/device_run.sh")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench.py"), "--sizes", "1024", "--dtypes", "int32",
                          "--no-progress", "--no-plots", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "no CUDA GPU: CPU tensors, auto against torch.sum" in out.stdout
    assert (tmp_path / "results.md").exists()
