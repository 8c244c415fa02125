"""The benchmark command and notebook API, on whatever device is present (CPU in CI)."""
import importlib.util
import json
import math
import os
import subprocess
import sys

import pytest

import reducekit
import reducekit.plotting
from reducekit import bench
from reducekit.bench import dims, timing

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
        "eager_2_24": 0.85, "ceiling_1gib": 97.0, "ceiling_256mib": 92.0, "host": 1.0,
        # issue 9
        "dims_vs_full": 1.05, "dims_vs_torch": 1.0, "dims_int": 5.0, "eager_small": 1.0, "host_signature": 0.0}
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


# ------------------------------------------------------------------------------------------------
# Reductions over dims (bench.py --dims)


def _dims_row(case, dtype, mode, torch_us, rk_us, full_us, bytes_read, samples=None, ceiling=4000.0, device="cuda"):
    row = {"case": case, "dtype": dtype, "mode": mode, "bytes_read": bytes_read, "torch_us": torch_us,
           "reducekit_us": rk_us, "full_us": full_us, "check": "ok", "errors": {},
           "samples_us": samples or {"torch": [torch_us], "reducekit": [rk_us], "full": [full_us]}}
    return bench.dims_derive(row, ceiling, device)


def _dims_run(rows, host=None):
    env = {"date": "2027-01-02 03:04 UTC", "gpu": "NVIDIA H200", "sms": 132, "l2_mb": 60.0, "driver": "1", "cuda": "13.0",
           "torch": "2.11", "reducekit": "0.1.0", "python": "3.12", "device": "cuda:0", "rounds": 3,
           "cold_l2": "inputs rotated over >= 252 MB (4x L2) and >= 2 buffers per case",
           "ceiling": {"gbps": 4000.0, "bytes": 2**32, "block": 512, "unroll": 8, "waves": 1}}
    run = {"env": env, "rows": rows}
    if host:
        run["host"] = host
    return run


def test_dims_cases_are_the_issues():
    cases = bench.dims_cases(bench.DIMS_DTYPES)
    assert len(cases) == 3 * 7 + 2
    f32 = [(c["shape"], c["dim"]) for c in cases if c["dtype"] == "float32"]
    assert f32 == [((4096, 4096), 1), ((4096, 4096), 0), ((32, 2**22), 1), ((2**22, 32), 0), ((2**20, 64), 1),
                   ((64, 2**20), 0), ((64, 256, 1024), (0, 2))]
    bf16 = [c["case"] for c in cases if c["dtype"] == "bfloat16"]
    assert bf16[-2:] == ["(8192, 8192) dim -1", "(8192, 8192) dim -1, dtype=float32"]
    assert not any("8192" in c["case"] for c in cases if c["dtype"] != "bfloat16")
    # CPU: the largest dim divided by a power of two, the other dims kept
    assert bench.scale_shape((32, 2**22), 2**24) == (32, 2**19)
    assert bench.scale_shape((2**20, 64), 2**24) == (2**18, 64)
    assert bench.scale_shape((64, 256, 1024), 2**24) == (64, 256, 1024)
    cpu = bench.dims_cases(["float32"], 2**22)
    assert cpu[2]["case"] == "(32, 2^17) dim 1 (scaled from (32, 2^22))" and cpu[2]["issue_shape"] == (32, 2**22)
    assert all(math.prod(c["shape"]) <= 2**22 for c in cpu)


def test_dims_figures_and_target_verdicts():
    """Derived figures and verdicts from given times: % of ceiling = bytes / time / ceiling, speedup =
    torch / reducekit, ratio_full = reducekit / full sum; targets as written (no margins)."""
    mib64 = 64 * 2**20
    ok = _dims_row("(4096, 4096) dim 1", "float32", "eager", 25.0, 20.0, 19.5, mib64)
    assert (ok["speedup"], ok["ratio_full"], ok["reducekit_pct"], ok["torch_pct"]) == (1.25, 1.026, 83.9, 67.1)
    assert ok["targets"] == {"vs_full": True, "not_slower": True, "int_speedup": None}
    assert bench.dims_verdict(ok) == "met (2 of 2)"
    ints = _dims_row("(4096, 4096) dim 0", "int32", "eager", 100.0, 21.0, 19.5, mib64)
    assert ints["targets"] == {"vs_full": False, "not_slower": True, "int_speedup": False}
    assert bench.dims_verdict(ints) == "missed: <= 1.05x full sum (1.077x); >= 5x torch.sum (integers) (4.762x)"
    # exactly on the bounds: met
    edge = _dims_row("(32, 2^22) dim 1", "int32", "graph", 105.0, 21.0, 20.0, 2**29)
    assert edge["targets"] == {"vs_full": True, "not_slower": True, "int_speedup": True}
    noisy = _dims_row("(8192, 8192) dim -1", "bfloat16", "eager", 30.0, 31.8, 31.0, 2**27,
                      samples={"torch": [29.0, 30.0, 32.0], "reducekit": [31.8, 31.0, 34.0], "full": [31.0, 31.0, 31.1]})
    assert noisy["spread"] == 0.1  # the largest over contenders: torch.sum's (32 - 29) / 30
    assert "not slower than torch.sum (0.943x, within the rounds' spread of 10.0%)" in bench.dims_verdict(noisy)
    # not measured (an error): no verdict on that figure
    err = _dims_row("(2^20, 64) dim 1", "float32", "graph", 50.0, None, 40.0, 2**28)
    err["errors"] = {"reducekit": "RuntimeError: capture"}
    assert err["targets"] == {"vs_full": None, "not_slower": None, "int_speedup": None}
    assert bench.dims_verdict(err) == "not timed: reducekit"
    wrong = dict(ok, check="mismatch: 3 of 4096 values differ")
    assert bench.dims_verdict(wrong).startswith("**wrong result: mismatch: 3 of 4096 values differ**; met")
    # on the CPU only "never slower than torch.sum" applies
    cpu = _dims_row("(4096, 4096) dim 1", "int32", "eager", 100.0, 90.0, 10.0, mib64, ceiling=None, device="cpu")
    assert cpu["targets"] == {"vs_full": None, "not_slower": True, "int_speedup": None} and cpu["reducekit_pct"] is None

    run = _dims_run([ok, ints, edge, noisy, err, wrong])
    table = bench.dims_table(run["rows"], "eager")
    assert table[0] == ("| case | dtype | torch.sum us | reducekit us | full sum us | torch.sum % of ceiling | reducekit % of ceiling "
                        "| speedup vs torch.sum | reducekit / full sum | targets |")
    assert table[2] == "| (4096, 4096) dim 1 | float32 | 25.0 | 20.0 | 19.5 | 67.1 | 83.9 | 1.25 | 1.03 | met (2 of 2) |"
    assert len(table) == 2 + 4  # eager rows only
    summary = bench.dims_target_summary(run["rows"], "eager")
    assert summary[0] == ("reducekit over dims <= 1.05x its full sum of the same bytes: 3 of 4 met "
                          "(missed: (4096, 4096) dim 0 int32, 1.077x)")
    assert summary[2] == "integer dtypes >= 5x torch.sum: 0 of 1 met (missed: (4096, 4096) dim 0 int32, 4.762x)"
    assert "wrong results: (4096, 4096) dim 1 float32: mismatch: 3 of 4096 values differ" in summary
    graph = bench.dims_target_summary(run["rows"], "graph")
    assert graph[-1] == "1 of 2 rows with a contender not timed (see \"Not timed\")"
    md = bench.dims_markdown(run)
    assert "## eager, cold L2" in md and "## CUDA graph replay, interleaved with a foreign kernel" in md
    assert "Read ceiling, measured in this run: **4.000 TB/s**" in md
    assert "- `reducekit.sum(x, dim, dtype=...)`, 1 row(s) ((2^20, 64) dim 1 float32 graph): RuntimeError: capture" in md
    cpu_header = bench.dims_table(_dims_run([cpu])["rows"], "eager")[0]
    assert cpu_header.startswith("| case | dtype | torch.sum us | reducekit us | full sum us | torch.sum GB/s")


def test_dims_report_block_and_merge(tmp_path):
    """report.py's dims block: one line while no dims run is committed, else the run's eager table,
    every mode's verdicts and the host times; bench.py --dims --merge regenerates the reports
    from results_dims.json files without timing."""
    report = _load("benchmarks/report.py", "report")
    assert "No H200 dims results are committed yet" in report.dims_block(None)
    mib64 = 64 * 2**20
    host = {"n": 1024, "dtype": "float32", "device": "cuda:0", "calls": 200, "samples": 25,
            "us": {"torch.sum(x)": 8.0, "reducekit.sum(x)": 8.3, "torch.sum(x, dim=0)": 9.0, "reducekit.sum(x, dim=0)": 8.5},
            "excess_us": {"reducekit.sum(x)": 0.3, "reducekit.sum(x, dim=0)": -0.5}, "errors": {}}
    a = _dims_run([_dims_row("(4096, 4096) dim 1", "float32", m, 25.0, 20.0, 19.5, mib64) for m in ("eager", "graph")])
    b = _dims_run([_dims_row("(4096, 4096) dim 1", "int32", m, 120.0, 21.0, 19.5, mib64) for m in ("eager", "graph")], host)
    b["env"] = dict(b["env"], date="2027-01-03 00:00 UTC", ceiling=dict(b["env"]["ceiling"], gbps=4100.0))
    block = " ".join(report.dims_block(a, plot=True).split())
    assert "one NVIDIA H200 (132 SMs, 60 MB L2" in block and "Read ceiling measured in the same run: 4.000 TB/s." in block
    assert "| (4096, 4096) dim 1 | float32 | 25.0 | 20.0 | 19.5 | 67.1 | 83.9 | 1.25 | 1.03 | met (2 of 2) |" in block
    assert "Targets, graph mode:" in block and "![dims: % of the read ceiling]" in block
    paths = []
    for name, run in (("a.json", a), ("b.json", b)):
        paths.append(str(tmp_path / name))
        with open(paths[-1], "w") as f:
            json.dump(run, f)
    out = tmp_path / "merged"
    merged = bench.main(["--dims", "--merge", *paths, "--out", str(out), "--no-plots"])
    assert merged["env"]["merged"].startswith("2 runs: float32 at 2027-01-02 03:04 UTC; int32 at 2027-01-03")
    assert [r["dtype"] for r in merged["rows"]] == ["float32", "float32", "int32", "int32"] and merged["host"] == host
    md = (out / "results_dims.md").read_text()
    assert "read ceilings of each run: 4.000 TB/s, 4.100 TB/s" in md
    assert "| `reducekit.sum(x, dim=0)` | 8.50 | -0.50 |" in md
    assert json.loads((out / "results_dims.json").read_text())["rows"] == merged["rows"]
    block = " ".join(report.dims_block(merged).split())
    assert "measured in the same runs: 4.000 and 4.100 TB/s" in block and "2027-01-02 and 2027-01-03" in block
    pytest.importorskip("matplotlib")
    fig = reducekit.plotting.plot_dims(merged, mode="graph")
    assert fig.axes
    assert [os.path.basename(p) for p in reducekit.plotting.save_dims_plots(merged, str(out))] == [
        "dims_pct_ceiling_eager.png", "dims_pct_ceiling_graph.png"]


def test_dims_command_line_without_gpu(tmp_path):
    """bench.py --dims on the CPU, scaled down: every contender timed, results checked against
    torch.sum, reports and plot written, host times of the four calls."""
    if reducekit._C.cuda_built:
        import torch

        if torch.cuda.is_available():
            pytest.skip("the GPU dims benchmark is run on the device machine")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "bench.py"), "--dims", "--dtypes", "float32", "int32",
                          "--budget", "0.01", "--rounds", "2", "--cpu-max-mib", "0.25", "--no-progress", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    run = json.loads((tmp_path / "results_dims.json").read_text())
    assert len(run["rows"]) == 14 and {r["mode"] for r in run["rows"]} == {"eager"}
    for r in run["rows"]:
        assert r["check"] == "ok" and not r["errors"], r
        assert all(r[f"{k}_us"] > 0 for k in bench.DIMS_CONTENDERS) and len(r["samples_us"]["torch"]) == 2
        assert r["targets"]["not_slower"] is not None and r["targets"]["vs_full"] is None
        assert math.prod(r["shape"]) * 4 <= 0.25 * 2**20 and r["bytes_read"] == math.prod(r["shape"]) * 4
    assert set(run["host"]["us"]) == set(bench.HOST_CALLS) and not run["host"]["errors"]
    md = (tmp_path / "results_dims.md").read_text()
    assert "no CUDA GPU: CPU tensors" in md and "| (16, 4096) dim 1 (scaled from (4096, 4096)) | float32 |" in md
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "dims_gbps_eager.png").stat().st_size > 5000


def test_dims_gpu_branch_with_fake_timers(monkeypatch):
    """dims_run's CUDA branch, driven on the CPU with fake timers and a fake 1 MiB L2: inputs
    rotate over >= 4x the L2 and >= 2 buffers; torch.sum and reducekit see the case's shape and
    the full sum the same buffers flat; graph mode skips a contender slower than graph_max_ms in
    eager mode; % of ceiling uses the given ceiling; a contender that raises is reported, not fatal."""
    import torch

    class Props:
        L2_cache_size = 2**20
    def dims_sum(x, dim=None, keepdim=False, *, dtype=None, method="auto"):  # the harness is under test, not the op
        return torch.sum(x, dtype=dtype) if dim is None else torch.sum(x, dim, keepdim, dtype=dtype)
    monkeypatch.setattr(reducekit, "sum", dims_sum)
    monkeypatch.setattr(torch.cuda, "set_device", lambda d: None)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: Props)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    # patched where dims_run and Buffers look them up
    monkeypatch.setattr(dims, "environment", lambda device: {"date": "d", "torch": "t", "device": str(device)})
    real_input = timing.random_input
    monkeypatch.setattr(timing, "random_input", lambda n, dtype, device: real_input(n, dtype, "cpu"))
    monkeypatch.setattr(dims, "DIMS_CASES", ({"shape": (64, 1024), "dim": 1}, {"shape": (1024, 1024), "dim": (0,)},
                                             {"shape": (8, 16, 32), "dim": -1, "sum_dtype": "float64", "only": ("int32",)}))
    seen = []

    def fake(mode):
        def timer(fn, bufs, budget_s=None):
            v = bufs.views
            out = [fn(x) for x in v]  # every rotating input, as the real timers do
            seen.append((mode, tuple(v[0].shape), len(v), len({x.data_ptr() for x in v}), out[0].dtype))
            us = 3000.0 if v[0].dim() == 1 else 10.0 * v[0].shape[0] / 64  # the full sum is "slow"
            return (us, 1) if mode == "eager" else us / 2
        return timer
    monkeypatch.setattr(dims, "time_cuda_eager", fake("eager"))
    monkeypatch.setattr(dims, "time_cuda_graph", fake("graph"))
    run = bench.dims_run(["float32", "int32"], device="cuda:0", rounds=2, ceiling={"gbps": 100.0, "given": True},
                         host=False, progress=False)
    assert run["env"]["cold_l2"].startswith("inputs rotated over >= 4 MB (4x L2) and >= 2 buffers")
    rows = {(r["case"], r["dtype"], r["mode"]): r for r in run["rows"]}
    assert len(rows) == 10
    small = rows[("(64, 1024) dim 1", "float32", "eager")]
    assert small["buffers"] == 16 and small["bytes_read"] == 2**18 and small["bytes_written"] == 64 * 4
    big = rows[("(1024, 1024) dims (0)", "int32", "eager")]
    assert big["buffers"] == 2 and big["bytes_written"] == 1024 * 8 and big["out_dtype"] == "int64"
    assert (big["torch_us"], big["reducekit_us"], big["full_us"]) == (160.0, 160.0, 3000.0)
    assert big["reducekit_pct"] == round(100 * 2**22 / 160e-6 / 1e9 / 100.0, 1) and big["ratio_full"] == round(160 / 3000, 3)
    assert all(r["check"] == "ok" for r in run["rows"])
    graph = rows[("(1024, 1024) dims (0)", "int32", "graph")]
    assert graph["full_us"] is None and graph["errors"] == {"full": "not timed in graph mode: eager 3.0 ms > 2 ms"}
    assert graph["torch_us"] == 80.0 and graph["targets"]["vs_full"] is None
    f64 = rows[("(8, 16, 32) dim -1, dtype=float64", "int32", "eager")]
    assert f64["out_dtype"] == "float64" and f64["bytes_written"] == 8 * 16 * 8
    # per (mode, contender): 2 rounds; shaped inputs for torch.sum/reducekit, flat for the full sum, distinct buffers
    assert ("eager", (1024, 1024), 2, 2, torch.int64) in seen and ("eager", (2**20,), 2, 2, torch.int64) in seen
    assert ("graph", (2**20,), 2, 2, torch.int64) not in seen
    assert sum(1 for s in seen if s[:3] == ("eager", (64, 1024), 16)) == 2 * 2 * 2  # torch.sum, reducekit x 2 rounds x 2 dtypes

    def broken(x, dim=None, **kw):
        if dim is not None:
            raise RuntimeError("dims path not built\nmore")
        return torch.sum(x)
    monkeypatch.setattr(reducekit, "sum", broken)
    monkeypatch.setattr(dims, "DIMS_CASES", dims.DIMS_CASES[:1])
    run = bench.dims_run(["float32"], device="cuda:0", rounds=1, ceiling={"gbps": 100.0, "given": True}, host=False,
                         progress=False, modes=("graph",))
    (r,) = run["rows"]
    assert r["check"] == "error: RuntimeError: dims path not built" and r["reducekit_us"] is None
    assert r["errors"] == {"reducekit": "RuntimeError: dims path not built"} and r["torch_us"] is not None


def test_sweep_distribution_is_the_documented_one():
    """benchmarks/sweep.py draws what its docstring says: ranks 1-5, bytes in [1 MiB, cap], a
    non-empty reduced set (argmax: one dim or all), channels_last only on 4-d, float-only ops on
    float dtypes; the tensor it makes has the drawn logical shape and layout; and the same seed
    draws the same cases."""
    spec = importlib.util.spec_from_file_location("sweep", os.path.join(os.path.dirname(__file__), "..", "benchmarks", "sweep.py"))
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    import random

    import torch
    rng = random.Random(5)
    cases = [sweep.draw(rng, 4) for _ in range(300)]
    assert cases == [sweep.draw(r, 4) for r in [random.Random(5)] for _ in range(300)]
    seen = set()
    for c in cases:
        rank, item = len(c["shape"]), torch.empty((), dtype=getattr(torch, c["dtype"])).element_size()
        assert 1 <= rank <= 5 and all(s >= 1 for s in c["shape"])
        assert 2**20 / 2 <= math.prod(c["shape"]) * item <= 4 * 2**20 * 1.6, c  # rounding of the sizes
        if c["op"] == "argmax":
            assert c["dims"] is None or len(c["dims"]) == 1
        else:
            assert c["dims"] and len(set(c["dims"])) == len(c["dims"]) and all(0 <= d < rank for d in c["dims"])
        assert c["layout"] != "channels_last" or rank == 4
        assert c["op"] not in sweep.FLOAT_ONLY or c["dtype"] in sweep.FLOATS
        seen |= {c["op"], c["dtype"], c["layout"]}
    assert set(sweep.OPS) | set(sweep.DTYPES) | {"contiguous", "permuted", "channels_last"} <= seen
    small = next(c for c in cases if c["layout"] == "permuted" and len(c["shape"]) > 1 and math.prod(c["shape"]) < 2**19)
    x = sweep.make(small, "cpu", 1)
    assert list(x.shape) == small["shape"] and (not x.is_contiguous() or sorted(small["perm"]) == small["perm"])


def test_fused_pair_compares_bits():
    """benchmarks/fused_pair.py's check that the one-launch and two-launch finishes agree
    (tune_columns.same_results over tests/helpers.same_bits) compares bits: -0.0 is not 0.0, a NaN's payload counts, 0-dim and tuple results (var_mean) are compared
    whole, and dtype or shape differences are reported."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("fused_pair", os.path.join(ROOT, "benchmarks", "fused_pair.py"))
        fp = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fp)
    finally:
        sys.path.pop(0)
    x = torch.tensor([1.5, 0.0, 2.0])
    assert fp.same_results(x, x.clone()) and fp.same_results(torch.tensor(3.0), torch.tensor(3.0))
    assert not fp.same_results(x, torch.tensor([1.5, -0.0, 2.0]))
    nan2 = torch.tensor([float("nan")]).view(torch.int32).add(1).view(torch.float32)
    assert not fp.same_results(torch.tensor([float("nan")]), nan2)
    assert not fp.same_results(x, x.double()) and not fp.same_results(x, x[:2])
    assert fp.same_results((x, torch.tensor(1)), (x.clone(), torch.tensor(1)))
    assert not fp.same_results((x, torch.tensor(1)), (x.clone(), torch.tensor(2)))
    for name, cases in fp.CASE_SETS.items():  # every named case is a case sweep.py can make and call
        for op, dtype, shape, dims in cases:
            assert op in fp.calls.__globals__["OPS"] and all(0 <= d < len(shape) for d in dims), (name, op, shape, dims)
