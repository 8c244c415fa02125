"""reducekit.sum on CUDA: every method x every dtype x the foundation's sizes against an exact
reference, within each method's own error bound (helpers.sum_bound), plus the properties the
reference documents' code gets wrong and the ones a drop-in for torch.sum must keep.

Known defects of the reference code (shared/seeds/README.md) and the test that catches each
(benchmarks/results/h200/faults.md shows the planted versions caught):
- `threadIdx.x & (warpSize - 1) == 0` (only thread 0 ever posts a warp sum): test_matrix
  (planted fault warp_post_precedence).
- kernels writing into their input: test_matrix and test_views compare the input bitwise after
  every call (write_input).
- 32-bit index arithmetic: test_more_than_2_31_elements (index32).
- shuffles on partially filled warps: sizes 1, 2, 31, 33, 1025 in test_matrix, and the
  compute-sanitizer stage of benchmarks/device_run.sh.
- a second pass that assumes at most 1024 partials: sizes 2^20+3 and 2^24+5 make 4097+ partials.
"""
import functools
import gc
import math
import os

import pytest
import torch

import reducekit
from helpers import (ALL_DTYPES, FLOAT_DTYPES, SIZES, assert_sum_ok, cancelling_tensor, exact_sum, generator,
                     poison_allocator, random_tensor, same_bits, sum_bound, torch_result_dtype)

pytestmark = pytest.mark.cuda

CUDA_METHODS = [m.name for m in reducekit.methods() if "cuda" in m.devices]
DETERMINISTIC_FLOAT = [m.name for m in reducekit.methods() if "cuda" in m.devices and m.deterministic_float]
NONDETERMINISTIC_FLOAT = [m for m in CUDA_METHODS if m not in DETERMINISTIC_FLOAT]


@functools.lru_cache(maxsize=2)
def case(dtype, n):
    """One seeded input per (dtype, size) and run, shared by all methods, with a pristine copy to
    prove no method writes into it, and its exact sum (integers: torch.sum on the CPU)."""
    x = random_tensor(n, dtype, "cuda", generator("cuda", "matrix", str(dtype), n))
    if dtype.is_floating_point:
        return x, x.clone(), None, exact_sum(x), x.double().abs().sum().item()
    return x, x.clone(), torch.sum(x.cpu()).item(), None, None


@pytest.mark.parametrize("method", CUDA_METHODS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("n", SIZES)
def test_matrix(method, dtype, n):
    x, pristine, expected_int, ref, abs_sum = case(dtype, n)
    poison_allocator("cuda")
    r = reducekit.sum(x, method=method)
    assert_sum_ok(r, x, method, expected_int, ref, abs_sum, seed_key=("matrix", str(dtype), n))
    assert same_bits(x, pristine), f"{method} modified its input"


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("method", CUDA_METHODS)
def test_views(method, dtype):
    """Contiguous views at odd element offsets (misaligned for 16-byte loads) whose neighbours
    are real data (a kernel reading past the end sums them), strided views, 2-D."""
    base = random_tensor(3 * 70001 + 64, dtype, "cuda", generator("cuda", "views", str(dtype)))
    pristine = base.clone()
    views = [base[1:70001], base[3:3 + 4097], base[7:7 + 33], base[5:-3], base[::3], base[: 256 * 256].view(256, 256).t(),
             base[2:2 + 3 * 1000].view(3, 1000)[:, 1:]]
    for v in views:
        poison_allocator("cuda")
        assert_sum_ok(reducekit.sum(v, method=method), v, method, seed_key=("views", str(dtype)))
    assert same_bits(base, pristine), f"{method} modified its input"


@pytest.mark.parametrize("method", DETERMINISTIC_FLOAT)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_deterministic_run_to_run(method, dtype):
    x = random_tensor(2**22 + 17, dtype, "cuda", generator("cuda", "det", str(dtype)))
    first = reducekit.sum(x, method=method)
    for _ in range(10):
        assert same_bits(reducekit.sum(x, method=method), first), f"{method} is registered deterministic but varied"


@pytest.mark.parametrize("method", DETERMINISTIC_FLOAT)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_deterministic_under_concurrent_load(method, dtype):
    """The bits do not depend on when blocks finish. On an idle GPU the blocks of one wave finish
    in nearly the same order every run, so a combine in arrival order can look deterministic;
    a memory-bound kernel running concurrently on another stream scrambles that order."""
    x = random_tensor(2**22 + 17, dtype, "cuda", generator("cuda", "load", str(dtype)))
    quiet = reducekit.sum(x, method=method)
    side = torch.cuda.Stream()
    big = torch.empty(2**28, dtype=torch.float32, device="cuda")
    torch.cuda.synchronize()
    results = []
    for k in range(6):
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            big.fill_(float(k))  # 1 GiB of writes competing for SMs and bandwidth
        torch.cuda._sleep(20_000 * k)  # vary where in the fill our launch lands
        results.append(reducekit.sum(x, method=method))
    torch.cuda.synchronize()
    for r in results:
        assert same_bits(r, quiet), f"{method} gave different bits under concurrent load"


@pytest.mark.parametrize("method", CUDA_METHODS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nan_inf(method, dtype):
    """NaN and inf propagate as in torch.sum, for every method and float dtype."""
    n = 100_003
    x = random_tensor(n, dtype, "cuda", generator("cuda", "naninf", str(dtype)))
    for pos in (0, 77_777, n - 1):
        y = x.clone(); y[pos] = float("nan")
        assert math.isnan(reducekit.sum(y, method=method).item()), f"NaN at {pos} lost"
    y = x.clone(); y[5] = float("inf")
    assert reducekit.sum(y, method=method).item() == math.inf
    y[n - 2] = -float("inf")
    assert math.isnan(reducekit.sum(y, method=method).item())
    y = x.clone(); y[n // 2] = -float("inf")
    assert reducekit.sum(y, method=method).item() == -math.inf


@pytest.mark.parametrize("method", CUDA_METHODS)
def test_float16_overflow_and_int64_wraparound(method):
    """float16 sums beyond 65504 are inf, int64 sums wrap around: both as torch.sum's."""
    big = torch.full((3000,), 30.0, dtype=torch.float16, device="cuda")  # 90000 > 65504
    assert torch.sum(big).item() == math.inf
    assert reducekit.sum(big, method=method).item() == math.inf
    w = torch.tensor([2**62, 2**62, 2**62, 7, -(2**61)] * 37, dtype=torch.int64, device="cuda")
    assert reducekit.sum(w, method=method).item() == torch.sum(w).item() == torch.sum(w.cpu()).item()


def test_empty_and_scalar():
    for method in CUDA_METHODS:
        assert reducekit.sum(torch.empty(0, device="cuda"), method=method).item() == 0
        assert reducekit.sum(torch.tensor(2.5, device="cuda"), method=method).item() == 2.5
        for dtype in ALL_DTYPES:
            r = reducekit.sum(torch.empty(0, 3, dtype=dtype, device="cuda"), method=method)
            assert r.dtype == torch_result_dtype(dtype) and r.item() == 0


@pytest.mark.large
@pytest.mark.parametrize("method", CUDA_METHODS)
def test_more_than_2_31_elements(method, big_int8):
    """A tensor past 2^31 elements: any 32-bit index arithmetic drops or wraps elements."""
    x, expected = big_int8
    assert reducekit.sum(x, method=method).item() == expected


@pytest.fixture(scope="module")
def big_int8():
    n = 2**31 + 33
    x = torch.randint(-128, 128, (n,), dtype=torch.int8, device="cuda", generator=generator("cuda", "big"))
    x[-33:] = 127  # the elements past 2^31 carry weight: dropping them changes the sum
    expected = sum(x[i: i + 2**28].sum().item() for i in range(0, n, 2**28))
    yield x, expected
    del x
    torch.cuda.empty_cache()


def test_current_stream_and_device_guard():
    """Runs on the current stream (no implicit sync with the default stream)."""
    s = torch.cuda.Stream()
    x = random_tensor(2**20, torch.float32, "cuda", generator("cuda", "stream"))
    torch.cuda.current_stream().synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(1_000_000)  # y is produced late on s: a kernel on another stream reads stale data
        y = x * 2
        r = reducekit.sum(y)
        r2 = reducekit.sum(y, method="two_pass")
    s.synchronize()
    assert_sum_ok(r, y)
    assert_sum_ok(r2, y, "two_pass")


def test_concurrent_streams_single_pass():
    """single_pass keeps a counter per stream: reductions racing on several streams stay right."""
    streams = [torch.cuda.Stream() for _ in range(4)]
    xs = [random_tensor(2**22 + i, torch.float32, "cuda", generator("cuda", "concurrent", i)) for i in range(4)]
    refs = [exact_sum(x) for x in xs]
    torch.cuda.synchronize()
    poison_allocator("cuda")
    results = []
    for _ in range(10):
        for i, (s, x) in enumerate(zip(streams, xs)):
            with torch.cuda.stream(s):
                results.append((reducekit.sum(x, method="single_pass"), i))
    torch.cuda.synchronize()
    for r, i in results:
        assert_sum_ok(r, xs[i], "single_pass", ref=refs[i], config=(512, 4, 0))


@pytest.mark.parametrize("method", ["auto", "single_pass", "two_pass", "vectorized", "cub_device", "block_atomic", "lock"])
def test_cuda_graph_replay(method):
    """Captured once, replayed on new data: counters reset themselves, workspace is reused, and
    every replay's result is that replay's sum (not a stale one)."""
    n = 2**20 + 7
    static_x = random_tensor(n, torch.float32, "cuda", generator("cuda", "graph", 0))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        reducekit.sum(static_x, method=method)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = reducekit.sum(static_x, method=method)
    config = (512, 4, 0) if method == "single_pass" else None
    for k in range(5):
        fresh = random_tensor(n, torch.float32, "cuda", generator("cuda", "graph", k + 1), mean=float(k + 1))
        static_x.copy_(fresh)
        g.replay()
        torch.cuda.synchronize()
        assert_sum_ok(static_out.clone(), fresh, method, config=config, captured=True)
    # eager calls between replays share nothing with the graph
    assert_sum_ok(reducekit.sum(static_x, method=method), static_x, method, config=config)


def test_host_final_refuses_graph_capture():
    x = random_tensor(4096, torch.float32, "cuda")
    g = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=r"method 'host_final' .* cannot be captured in a CUDA graph"):
        with torch.cuda.graph(g):
            reducekit.sum(x, method="host_final")


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.bfloat16], ids=str)
def test_opcheck_cuda(dtype):
    x = random_tensor(5000, dtype, "cuda")
    for method in ("auto", "two_pass", "cub_device"):
        torch.library.opcheck(torch.ops.reducekit.sum.default, (x,), {"method": method})


def test_autograd_cuda():
    x = torch.randn(100, 3, device="cuda", requires_grad=True)
    reducekit.sum(x).backward()
    assert torch.equal(x.grad, torch.ones_like(x))


def test_single_pass_configs_agree():
    """Every compiled single_pass configuration and grid gives a correct result, with and
    without programmatic dependent launch, bitwise the same."""
    x = random_tensor(2**21 + 3, torch.float32, "cuda", generator("cuda", "configs"))
    v = x[1:]
    ref = exact_sum(v)
    configs = reducekit._C.single_pass_configs()
    assert (512, 4) in configs and len(configs) >= 6
    for block, unroll in configs:
        for grid in (0, 1, 7, 1000):
            poison_allocator("cuda")
            r = torch.ops.reducekit._single_pass(v, block, unroll, grid)
            assert_sum_ok(r, v, "single_pass", ref=ref, config=(block, unroll, grid))
            assert same_bits(torch.ops.reducekit._single_pass(v, block, unroll, grid, False), r), "PDL changed the result"
    with pytest.raises(ValueError, match=r"\(block=384, unroll=4\) is not a compiled configuration"):
        torch.ops.reducekit._single_pass(x, 384, 4, 0)
    with pytest.raises(ValueError, match="grid=-1 is out of range"):
        torch.ops.reducekit._single_pass(x, 512, 4, -1)
    with pytest.raises(ValueError, match="unroll must be 4, 8 or 16, got 3"):
        torch.ops.reducekit._read_probe(x[: 2**21], 512, 3, 1)


def test_auto_accuracy_float64_accumulator():
    """float32 accumulates in float64: on cancelling data auto lands within its bound (float64
    tree error plus half an ulp of float32), which any float32 accumulator misses by orders of
    magnitude (torch.sum's does: checked, so the data separates the two); and on magnitudes
    1e-8..1e8 of both signs its error is never above torch.sum's."""
    x = cancelling_tensor(2**24, "cuda", generator("cuda", "accuracy"))
    ref = exact_sum(x)
    assert_sum_ok(reducekit.sum(x), x, "auto", ref=ref)
    assert abs(torch.sum(x).double().item() - ref) > 10 * sum_bound(x, "auto", ref), "data does not separate accumulators"
    n = 2**24
    g = generator("cuda", "accuracy_mixed")
    mags = torch.exp(torch.empty(n, device="cuda", dtype=torch.float64).uniform_(math.log(1e-8), math.log(1e8), generator=g))
    y = (torch.randn(n, device="cuda", dtype=torch.float64, generator=g).sign() * mags).float()
    ref = exact_sum(y)
    r = reducekit.sum(y)
    assert_sum_ok(r, y, "auto", ref=ref)
    assert abs(r.double().item() - ref) <= abs(torch.sum(y).double().item() - ref)


# ------------------------------------------------------------------------------------------------
# Properties of a drop-in: determinism switch, sync debug mode, other devices, fallback paths,
# memory.

@pytest.mark.parametrize("method", NONDETERMINISTIC_FLOAT)
def test_use_deterministic_algorithms(method):
    """Methods whose float results vary run to run raise under
    torch.use_deterministic_algorithms(True) as torch's nondeterministic ops do, warn with
    warn_only=True; integers and the deterministic methods stay allowed."""
    x = random_tensor(4097, torch.float32, "cuda")
    xi = random_tensor(4097, torch.int32, "cuda")
    old, old_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    try:
        torch.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match=rf"reducekit.sum\(method='{method}'\).* does not have a deterministic implementation"):
            reducekit.sum(x, method=method)
        assert_sum_ok(reducekit.sum(xi, method=method), xi, method)
        for ok in ("auto", "single_pass", "two_pass", "cub_device"):
            assert_sum_ok(reducekit.sum(x, method=ok), x, ok)
        torch.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match=rf"reducekit.sum\(method='{method}'\)"):
            r = reducekit.sum(x, method=method)
        assert_sum_ok(r, x, method)
    finally:
        torch.use_deterministic_algorithms(old, warn_only=old_warn)


@pytest.mark.parametrize("method", CUDA_METHODS)
def test_sync_debug_mode(method):
    """No method but host_final synchronizes the host: all run under set_sync_debug_mode("error");
    host_final's wait is reported there like torch's own."""
    x = random_tensor(65537, torch.float32, "cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        if method == "host_final":
            with pytest.raises(RuntimeError, match="called a synchronizing CUDA operation"):
                reducekit.sum(x, method=method)
            return
        r = reducekit.sum(x, method=method)
        r0 = reducekit.sum(x[:0], method=method)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert_sum_ok(r, x, method)
    assert r0.item() == 0


@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs two GPUs")
@pytest.mark.parametrize("method", CUDA_METHODS)
def test_second_device_while_first_is_current(method):
    """A tensor on cuda:1 is reduced on cuda:1 (its stream, its SM count, its counter slots)
    while cuda:0 is current, and cuda:0 stays current."""
    torch.cuda.set_device(0)
    x = random_tensor(2**20 + 3, torch.float32, "cuda:1", generator("cuda:1", "dev1"))
    xi = random_tensor(2**20 + 3, torch.int32, "cuda:1", generator("cuda:1", "dev1i"))
    for _ in range(2):  # the second call reuses the device's counter slot
        r, ri = reducekit.sum(x, method=method), reducekit.sum(xi, method=method)
        assert r.device == x.device and ri.device == xi.device
        assert_sum_ok(r, x, method)
        assert_sum_ok(ri, xi, method)
    assert torch.cuda.current_device() == 0


def test_counter_slot_exhaustion_falls_back_to_two_launches():
    """When no counter slot is free, single_pass writes partials and a second launch combines
    them: same result within the bound, on fresh and on known streams."""
    x = random_tensor(2**22 + 5, torch.float32, "cuda", generator("cuda", "slots"))
    ref = exact_sum(x)
    used, old = reducekit._C._single_pass_slots(0, 0)  # hand out no new slots
    try:
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            poison_allocator("cuda")
            r = reducekit.sum(x, method="single_pass")
            rg = torch.ops.reducekit._single_pass(x, 256, 4, 5000)
        s.synchronize()
        assert reducekit._C._single_pass_slots(0, -1)[0] == used, "a slot was handed out past the limit"
        assert_sum_ok(r, x, "single_pass", ref=ref, config=(512, 4, 0))
        assert_sum_ok(rg, x, "single_pass", ref=ref, config=(256, 4, 5000))
    finally:
        reducekit._C._single_pass_slots(0, old)


def test_workspace_partials_past_static_slots_and_grids():
    """Slots past the 128 that have static partials (each graph capture owns a slot; torch's
    streams come from a pool of 32), and grids past 4096 blocks, take their partials from the
    workspace: every one of 140 captured graphs replays to its own input's sum."""
    static = [random_tensor(2**20 + 5 + i, torch.float32, "cuda", generator("cuda", "ws", i)) for i in range(140)]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        reducekit.sum(static[0], method="single_pass")
    torch.cuda.current_stream().wait_stream(s)
    graphs, outs = [], []
    for x in static:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outs.append(reducekit.sum(x, method="single_pass"))
        graphs.append(g)
    assert reducekit._C._single_pass_slots(0, -1)[0] >= 140
    for x in static:
        x.add_(0.5)
    for g in graphs:
        g.replay()
    torch.cuda.synchronize()
    for r, x in zip(outs, static):
        assert_sum_ok(r.clone(), x, "single_pass", config=(512, 4, 0))
    x = static[-1]
    assert_sum_ok(torch.ops.reducekit._single_pass(x, 128, 2, 5000), x, "single_pass", config=(128, 2, 5000))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.parametrize("method", ["auto", "two_pass", "cub_device", "host_final"])
def test_memory_flat_over_10000_calls(method):
    """Neither device memory nor host memory grows over 10,000 calls."""
    x = random_tensor(65537, torch.float32, "cuda")
    for _ in range(100):
        reducekit.sum(x, method=method)
    torch.cuda.synchronize()
    gc.collect()
    dev0, rss0 = torch.cuda.memory_allocated(), _rss_bytes()
    for _ in range(10_000):
        reducekit.sum(x, method=method)
    torch.cuda.synchronize()
    gc.collect()
    assert torch.cuda.memory_allocated() == dev0
    assert _rss_bytes() - rss0 < 4 << 20, f"host memory grew by {(_rss_bytes() - rss0) >> 10} KiB over 10,000 calls"


def test_method_argument_errors_cuda():
    x = torch.ones(3, device="cuda")
    with pytest.raises(TypeError, match=r"method must be a str .* got int 3"):
        reducekit.sum(x, method=3)
    with pytest.raises(ValueError, match=r"unknown method 'fastest'"):
        reducekit.sum(x, method="fastest")
