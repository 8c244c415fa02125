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


def _load(path, name):
    """A script of the repository (benchmarks/report.py, benchmarks/tune.py, ...) as a module."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_is_generated_from_committed_results():
    """README's result, target and ranking blocks are what benchmarks/report.py generates from the
    committed files under benchmarks/results/ (no typed-in figures): `report.py --check`."""
    report = _load("benchmarks/report.py", "report")
    diff = report.check(ROOT)
    assert not diff, "README.md differs from the committed results; run python benchmarks/report.py\n" + diff


def test_graph_modes_are_labelled():
    """Runs from before issue 8 timed "graph" back to back: their rows read as graph_chained, and
    the report titles say which graph timing each table used."""
    old = {"env": {"date": "2026-11-21 10:09 UTC"}, "rows": [
        {"dtype": "float32", "n": 1024, "method": m, "mode": mode, "time_us": t, "gbps": 1.0, "pct_ceiling": None, "speedup": 1.0}
        for m, t in (("torch.sum", 2.0), ("auto", 1.0)) for mode in ("eager", "graph")]}
    run = bench.relabel_chained(old)
    assert run["env"]["graph_timing"] == "chained"
    assert {r["mode"] for r in run["rows"]} == {"eager", "graph_chained"}
    assert bench.relabel_chained(run) == run
    md = bench.markdown(run)
    assert "CUDA graph replay, chained" in md and "predates issue 8" in md and "interleaved with a foreign kernel" not in md
    new = dict(old, env={"date": "x", "graph_timing": bench.GRAPH_TIMING})
    md = bench.markdown(new)
    assert "CUDA graph replay, interleaved with a foreign kernel (GPU time only)" in md and "Graph modes." in md
    assert bench.merge_runs([old, new])["env"]["graph_timing"] == "mixed"
    with pytest.raises(ValueError, match="unknown mode"):
        bench.benchmark_run(dtypes=["float32"], sizes=[256], device="cpu", progress=False, modes=("eager", "graf"))
    rows = bench.benchmark_run(dtypes=["float32"], sizes=[256], device="cpu", progress=False, budget_s=0.01, chained=True)["rows"]
    assert {r["mode"] for r in rows} == {"eager"}  # no graphs without a GPU


def test_perf_targets_are_the_issues_and_misses_are_recorded(tmp_path, monkeypatch):
    """tests/test_perf.py asserts the targets as written (no margins), records every figure before
    asserting (a miss is recorded as passed=False), and report.py builds README's targets table
    from the merged file."""
    report = _load("benchmarks/report.py", "report")
    targets = report.read_targets(os.path.join(ROOT, "tests", "test_perf.py"))
    assert {k: v["bound"] for k, v in targets.items()} == {
        "no_slower": 1.05, "float32_2_26": 1.05, "int32_speedup": 5.0, "byte_speedup": 15.0, "graph_ratio": 0.7,
        "eager_2_24": 0.85, "ceiling_1gib": 97.0, "ceiling_256mib": 92.0, "host": 1.0}
    monkeypatch.delenv("REDUCEKIT_PERF_JSON", raising=False)  # never write into a real run's file
    perf = _load("tests/test_perf.py", "perf_under_test")
    monkeypatch.setattr(perf, "environment", lambda device: {"date": "2026-01-01 00:00 UTC", "gpu": "G", "torch": "t"})

    class Request:
        class node:
            nodeid = "tests/test_perf.py::test_small_float_graph_ratio[65536-float32]"

    perf.check(Request, "graph_ratio", "float32 2^16 graph", {"torch_us": 10.0, "auto_us": 6.0, "ratio": 0.6})
    Request.node.nodeid = "tests/test_perf.py::test_small_float_graph_ratio[65536-bfloat16]"
    with pytest.raises(AssertionError, match="misses the target"):
        perf.check(Request, "graph_ratio", "bfloat16 2^16 graph", {"torch_us": 10.0, "auto_us": 7.5, "ratio": 0.75})
    path = str(tmp_path / "perf.json")
    perf.write_perf_json(path, perf._RECORDS)
    perf.write_perf_json(path, perf._RECORDS)  # merging by test id: no duplicates
    data = json.loads(open(path).read())
    assert [t["passed"] for t in data["tests"]] == [True, False]
    block = report.targets_block(data, targets)
    assert ("| float32/bfloat16 graph time <= 0.7x torch.sum, 2^16..2^22 (interleaved graph timing) | 0.60x to 0.75x "
            "over 2 cases; worst: bfloat16 2^16 graph, 0.75x | no: 1 of 2 missed (bfloat16 2^16 graph) |") in block
    assert "| int32 >= 5x torch.sum at 2^24 and 2^26 (eager) | not run | — |" in block
    assert "no perf run committed yet" in report.targets_block(None, targets)


def test_tune_rows_name_the_measured_device(tmp_path):
    """tune.py takes the rows' min_cc and the header's GPU, SMs and date from tune.json; an old
    tune.json without them gets cc 9.0 only for an H100/H200, said in the header."""
    tune = _load("benchmarks/tune.py", "tune")
    row = {"dtype": "float32", "n": 4096, "mode": "graph", "torch": 3.0, "cub": 2.0, "configs": {"256x4@0": 1.5}, "best": "256x4@0"}
    new = {"gpu": "NVIDIA B200", "sms": 148, "cc": 100, "date": "2027-01-02 03:04 UTC", "graph_timing": "interleaved", "rows": [row]}

    def written(tune_json, source):
        path = tune.write_inc(tune_json, str(tmp_path), source)
        text = open(path).read()
        header = " ".join(line[3:] for line in text.splitlines() if line.startswith("// "))
        return os.path.basename(path), text, header

    name, text, header = written(new, "tune.json")
    assert name == "tuning_sm100.inc" and text.rstrip().endswith("// clang-format on")
    assert "NVIDIA B200 (148 SMs, compute capability 10.0)" in header and "2027-01-02 03:04 UTC" in header
    assert "interleaved with a foreign kernel" in header
    sp = "{Method::SinglePass, 256, 4, 0, true}"
    assert f"{{100, DType::Float32, INT64_MAX, {sp}, {sp}}},  // 2^12 graph 1.50 us" in text
    # CUB serves graph capture only; eager calls keep the best single_pass configuration
    cub_row = dict(row, cub=1.0)
    name, text, header = written(dict(new, rows=[cub_row]), "tune.json")
    assert f"{{Method::CubDevice, 0, 0, 0, false}}, {sp}}},  // 2^12 graph 1.00 us (CUB; eager: 256x4@0 1.50 us)" in text
    # PDL is kept only where the same configuration without it was not faster
    slower_pdl = dict(row, best_without_pdl=1.25)
    name, text, header = written(dict(new, rows=[slower_pdl]), "tune.json")
    assert "{Method::SinglePass, 256, 4, 0, false}, {Method::SinglePass, 256, 4, 0, false}},  // 2^12 graph 1.25 us (256x4@0 without PDL)" in text
    old = {"gpu": "NVIDIA H200", "sms": 132, "rows": [row]}
    name, text, header = written(old, "old/tune.json")
    assert name == "tuning_sm90.inc" and "{90, DType::Float32, INT64_MAX," in text and "2^12 graph_chained" in text
    assert "9.0 assumed from the GPU name" in header and "does not record the date" in header and "chained" in header
    with pytest.raises(SystemExit, match="compute capability"):
        tune.write_inc({"gpu": "NVIDIA A100", "sms": 108, "rows": [row]}, str(tmp_path), "a100/tune.json")
