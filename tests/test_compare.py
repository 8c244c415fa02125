"""reducekit.compare (issue 23): reducekit's op against torch's on the reader's shapes, on whatever
device is present (CPU in CI); its arguments' errors; reducekit.plot of its rows; auto_choice."""
import pytest
import torch

import reducekit
from reducekit.bench import compare as cmp


def rows(*args, **kwargs):
    kwargs.setdefault("budget_s", 0.005)
    kwargs.setdefault("rounds", 1)
    kwargs.setdefault("progress", False)
    kwargs.setdefault("as_dataframe", False)
    return reducekit.compare(*args, **kwargs)


def test_rows_one_per_case_with_times_ratio_and_check():
    out = rows("var_mean", [(64, 128), 1000], dims=[-1, None], dtypes=["float32", torch.bfloat16], device="cpu")
    assert [(r["shape"], r["dim"], r["dtype"]) for r in out] == [
        ((64, 128), "-1", "float32"), ((64, 128), "-1", "bfloat16"), ((64, 128), "all", "float32"), ((64, 128), "all", "bfloat16"),
        ((1000,), "-1", "float32"), ((1000,), "-1", "bfloat16"), ((1000,), "all", "float32"), ((1000,), "all", "bfloat16")]
    for r in out:
        assert r["op"] == "var_mean" and r["device"] == "cpu" and r["mode"] == "eager" and r["check"] == "ok"
        assert r["torch_us"] > 0 and r["reducekit_us"] > 0
        assert r["ratio"] == pytest.approx(r["reducekit_us"] / r["torch_us"], rel=1e-2)
        assert r["speedup"] == pytest.approx(r["torch_us"] / r["reducekit_us"], rel=1e-2)
        nbytes = 64 * 128 * (4 if r["dtype"] == "float32" else 2) if r["shape"] == (64, 128) else 1000 * (4 if r["dtype"] == "float32" else 2)
        assert r["reducekit_gbps"] == pytest.approx(nbytes / r["reducekit_us"] / 1e3, rel=2e-2)
        assert r["pct_ceiling"] is None  # no read probe on a CPU


@pytest.mark.parametrize("op", reducekit.OPS)
def test_every_op_runs_and_agrees_with_torch(op):
    dtype = "int32" if op in ("count_nonzero", "all", "any") else "float32"
    (r,) = rows(op, (33, 70), dims=0, dtypes=[dtype], device="cpu")
    assert r["check"] == "ok" or r["check"].startswith("not checked (prod"), r
    assert r["torch_us"] > 0 and r["reducekit_us"] > 0


def test_a_wrong_result_is_reported(monkeypatch):
    real = cmp._calls

    def wrong(name, dim):
        ours, theirs = real(name, dim)
        return (lambda x: ours(x) + 1), theirs

    monkeypatch.setattr(cmp, "_calls", wrong)
    (r,) = rows("sum", (8, 8), dims=-1, device="cpu")
    assert r["check"].startswith("mismatch"), r


def test_a_list_is_several_shapes_a_tuple_one():
    assert cmp._shapes([4096, 8192]) == [(4096,), (8192,)]
    assert cmp._shapes((4096, 8192)) == [(4096, 8192)] and cmp._shapes(7) == [(7,)]
    assert cmp._shapes([(2, 3), 5]) == [(2, 3), (5,)]
    assert cmp._dims([-1, 0]) == [-1, 0] and cmp._dims((0, 1)) == [(0, 1)] and cmp._dims(None) == [None]


def test_ceiling_gives_percent():
    (r,) = rows("sum", 4096, device="cpu", ceiling=100.0)  # ignored on a CPU: no probe there
    assert r["pct_ceiling"] is None
    with pytest.raises(ValueError, match="ceiling="):
        cmp._ceiling("fast", torch.device("cuda"))
    assert cmp._ceiling(100.0, torch.device("cuda")) == {"gbps": 100.0}


def test_dataframe_and_plot():
    pd = pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    df = reducekit.compare("argmax", [(16, 500)], dims=-1, budget_s=0.005, rounds=1, progress=False, device="cpu")
    assert isinstance(df, pd.DataFrame) and list(df["op"]) == ["argmax"]
    assert {"torch_us", "reducekit_us", "ratio", "speedup", "pct_ceiling", "check"} <= set(df.columns)
    assert df.attrs["env"]["device"] == "cpu"
    fig = reducekit.plot(df)
    assert len(fig.axes[0].patches) == 1
    with pytest.raises(ValueError, match="kind must be 'compare'"):
        reducekit.plot(df, kind="bandwidth")


@pytest.mark.parametrize("kwargs,words", [
    (dict(op="summ", shapes=(4, 4)), ["op='summ'", "reducekit.OPS", "var_mean"]),
    (dict(op=torch.sum, shapes=(4, 4)), ["op=", "a str"]),
    (dict(op="sum", shapes=(4, -1)), ["shapes", "(4, -1)", "positive ints"]),
    (dict(op="sum", shapes=[]), ["shapes=[]", "list of shapes"]),
    (dict(op="sum", shapes="4x4"), ["shapes='4x4'", "list of shapes"]),
    (dict(op="sum", shapes=(4, 4), dims=[2]), ["dims", "2", "out of range", "(4, 4)", "-2 to 1"]),
    (dict(op="sum", shapes=(4, 4), dims=["x"]), ["dims", "'x'", "None"]),
    (dict(op="argmax", shapes=(4, 4), dims=(0, 1)), ["dims", "(0, 1)", "argmax takes one dim", "dims=[0, 1]"]),
    (dict(op="sum", shapes=(4, 4), dtypes=["float33"]), ["dtypes", "'float33'", "float32"]),
    (dict(op="var", shapes=(4, 4), dtypes=["int32"]), ["var", "'int32'", "drop 'int32' from dtypes"]),
    (dict(op="sum", shapes=(4, 4), device="gpu"), ["device='gpu'", "'cpu', 'cuda'"]),
    (dict(op="sum", shapes=(4, 4), mode="graphs"), ["mode='graphs'", "eager"]),
    (dict(op="sum", shapes=(4, 4), rounds=0), ["rounds=0"]),
    (dict(op="sum", shapes=(4, 4), budget_s=-1), ["budget_s=-1"]),
])
def test_bad_arguments_name_the_argument_value_and_fix(kwargs, words):
    with pytest.raises((ValueError, TypeError)) as e:
        reducekit.compare(progress=False, **kwargs)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error given without a GPU")
def test_cuda_without_gpu_says_so():
    with pytest.raises(ValueError, match="device='cuda' but .*use device='cpu'"):
        reducekit.compare("sum", (4, 4), device="cuda")
    with pytest.raises(ValueError, match="mode='graph'.*use mode='eager'"):
        reducekit.compare("sum", (4, 4), device="cpu", mode="graph")


def test_compare_times_with_the_benchmarks_timers(monkeypatch):
    """No third timing loop: compare's figures are dims._time_rounds' (time_cpu on a CPU)."""
    seen = []
    real = cmp._time_rounds

    def spy(fns, inputs, mode, rounds, budget_s, on_gpu, skip):
        seen.append((sorted(fns), mode, rounds))
        return real(fns, inputs, mode, rounds, budget_s, on_gpu, skip)

    monkeypatch.setattr(cmp, "_time_rounds", spy)
    rows("amax", (8, 8), dims=[0, 1], device="cpu", rounds=2)
    assert seen == [(["reducekit", "torch"], "eager", 2)] * 2


def test_auto_choice_is_the_tuning_table():
    c = reducekit.auto_choice("float32", 2**24, cc=90)
    assert set(c) == {"method", "block", "unroll", "grid"} and c["method"] in {m.name for m in reducekit.methods()}
    assert reducekit.auto_choice(torch.float32, 2**24, cc=90) == c
    assert tuple(c.values()) == reducekit._C.auto_choice("float32", 2**24, 90, False)
    with pytest.raises(ValueError, match="dtype='float33'"):
        reducekit.auto_choice("float33", 10, cc=90)


def test_public_api_lists_compare():
    assert {"compare", "auto_choice", "plot", "benchmark"} <= set(reducekit.__all__)
    assert all(hasattr(reducekit, n) for n in reducekit.__all__)


def test_without_tqdm_and_pandas(monkeypatch, capsys):
    """tqdm and pandas are optional: a plain progress line and a list of dicts."""
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "pandas", None)
    out = reducekit.compare("sum", [(4, 4)] * 25, budget_s=0.001, rounds=1, device="cpu")
    assert isinstance(out, list) and len(out) == 25 and out[0]["check"] == "ok"
    assert "25/25 cells" in capsys.readouterr().err


def test_gpu_branch_with_fake_timers(monkeypatch):
    """compare's CUDA branch, driven on the CPU with fake timers and a fake 1 MiB L2 (as
    test_bench's dims test): inputs rotate over >= 4x the L2 and >= 2 buffers in the case's shape,
    both contenders see every buffer, graph mode uses time_cuda_graph, the read ceiling is measured
    when not given, and % of ceiling is reducekit's GB/s over it."""
    from reducekit.bench import dims, timing

    class Props:
        L2_cache_size = 2**20

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(reducekit._C, "cuda_built", True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "set_device", lambda d: None)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: Props)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(cmp, "environment", lambda device: {"device": str(device), "gpu": "Fake GPU"})
    monkeypatch.setattr(cmp, "read_ceiling", lambda device: {"gbps": 50.0, "measured": True})
    real_input = timing.random_input
    monkeypatch.setattr(timing, "random_input", lambda n, dtype, device: real_input(n, dtype, "cpu"))
    seen = []

    def fake(mode):
        def timer(fn, bufs, budget_s=None):
            v = bufs.views
            for x in v:
                fn(x)
            seen.append((mode, tuple(v[0].shape), len(v), len({x.data_ptr() for x in v})))
            return (8.0, 1) if mode == "eager" else 4.0
        return timer

    monkeypatch.setattr(dims, "time_cuda_eager", fake("eager"))
    monkeypatch.setattr(dims, "time_cuda_graph", fake("graph"))
    out = rows("var_mean", [(64, 1024), (1024, 1024)], dims=-1, device="cuda", rounds=2)
    assert [r["device"] for r in out] == ["cuda:0", "cuda:0"]
    assert seen[:4] == [("eager", (64, 1024), 16, 16)] * 4  # 4 MiB / 256 KiB; torch, reducekit x 2 rounds
    assert seen[4:] == [("eager", (1024, 1024), 2, 2)] * 4  # a 4 MiB input: 2 buffers
    small = out[0]
    assert small["torch_us"] == small["reducekit_us"] == 8.0 and small["ratio"] == 1.0 and small["check"] == "ok"
    assert small["pct_ceiling"] == round(100 * (64 * 1024 * 4 / 8e-6 / 1e9) / 50.0, 1)
    seen.clear()
    (g,) = rows("argmax", (64, 1024), dims=0, device="cuda", mode="graph", ceiling=100.0)
    assert {s[0] for s in seen} == {"graph"} and g["reducekit_us"] == 4.0 and g["mode"] == "graph"
    assert g["pct_ceiling"] == round(100 * (64 * 1024 * 4 / 4e-6 / 1e9) / 100.0, 1)
