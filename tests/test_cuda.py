"""reducekit.sum on CUDA: every method x every dtype x the foundation's sizes against torch.sum,
plus the properties the reference documents' code gets wrong.

Known defects of the reference code (shared/seeds/README.md) and the test that would catch each:
- `threadIdx.x & (warpSize - 1) == 0` (precedence: only thread 0 ever posts a warp sum) and
  `threadIdx.x % stride == 2` (wrong threads combine): wrong sums on every size > 32, caught by
  test_matrix.
- kernels writing into their input: test_matrix and test_views compare the input bitwise after
  every call.
- 32-bit index arithmetic: test_more_than_2_31_elements (2^31 + 33 int8 elements).
- shuffles on partially filled warps: sizes 1, 2, 31, 33, 1025 in test_matrix (and the
  compute-sanitizer run in benchmarks/device_run.sh).
- a second pass that assumes at most 1024 partials: sizes 2^20+3 and 2^24+5 produce 4097+ partials.
"""
import functools
import math

import pytest
import torch

import reducekit
from helpers import ALL_DTYPES, SIZES, acc_dtype, assert_sum_ok, poison_allocator, random_tensor, same_bits

pytestmark = pytest.mark.cuda

CUDA_METHODS = [m.name for m in reducekit.methods() if "cuda" in m.devices]
DETERMINISTIC_FLOAT = [m.name for m in reducekit.methods() if "cuda" in m.devices and m.deterministic_float]


def method_acc(method: str, dtype: torch.dtype) -> torch.dtype:
    # auto and single_pass accumulate at least as wide as the gallery; the gallery bound holds.
    return acc_dtype(dtype)


@functools.lru_cache(maxsize=2)
def case(dtype, n):
    """One fresh random input per (dtype, size) and run, shared by all methods, with a pristine
    copy to prove no method writes into it, and torch.sum's integer result."""
    x = random_tensor(n, dtype, "cuda")
    expected_int = None if dtype.is_floating_point else torch.sum(x).item()
    return x, x.clone(), expected_int


@pytest.mark.parametrize("method", CUDA_METHODS)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("n", SIZES)
def test_matrix(method, dtype, n):
    x, pristine, expected_int = case(dtype, n)
    poison_allocator("cuda")
    r = reducekit.sum(x, method=method)
    assert_sum_ok(r, x, method_acc(method, dtype), expected_int)
    assert same_bits(x, pristine), f"{method} modified its input"


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("method", CUDA_METHODS)
def test_views(method, dtype):
    """Contiguous views at odd element offsets (misaligned for 16-byte loads), strided views, 2-D."""
    base = random_tensor(3 * 70001 + 64, dtype, "cuda")
    pristine = base.clone()
    views = [base[1:70001], base[3:3 + 4097], base[7:7 + 33], base[5:], base[::3], base[: 256 * 256].view(256, 256).t(),
             base[2:2 + 3 * 1000].view(3, 1000)[:, 1:]]
    for v in views:
        assert_sum_ok(reducekit.sum(v, method=method), v, method_acc(method, dtype))
    assert same_bits(base, pristine)


@pytest.mark.parametrize("method", DETERMINISTIC_FLOAT)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64], ids=str)
def test_deterministic_run_to_run(method, dtype):
    x = random_tensor(2**22 + 17, dtype, "cuda")
    first = reducekit.sum(x, method=method)
    for _ in range(5):
        assert same_bits(reducekit.sum(x, method=method), first), f"{method} is registered deterministic but varied"


@pytest.mark.parametrize("method", ["auto", "single_pass", "two_pass", "atomic_block", "cub_device"])
def test_nan_inf(method):
    x = random_tensor(100_003, torch.float32, "cuda")
    y = x.clone(); y[77_777] = float("nan")
    assert math.isnan(reducekit.sum(y, method=method).item())
    y = x.clone(); y[5] = float("inf")
    assert reducekit.sum(y, method=method).item() == math.inf
    y[99_999] = -float("inf")
    assert math.isnan(reducekit.sum(y, method=method).item())


def test_empty_and_scalar():
    for method in CUDA_METHODS:
        assert reducekit.sum(torch.empty(0, device="cuda"), method=method).item() == 0
        assert reducekit.sum(torch.tensor(2.5, device="cuda"), method=method).item() == 2.5
        assert reducekit.sum(torch.empty(0, 3, dtype=torch.int8, device="cuda"), method=method).dtype == torch.int64


@pytest.mark.large
@pytest.mark.parametrize("method", CUDA_METHODS)
def test_more_than_2_31_elements(method, big_int8):
    """A tensor past 2^31 elements: any 32-bit index arithmetic drops or wraps elements."""
    x, expected = big_int8
    assert reducekit.sum(x, method=method).item() == expected


@pytest.fixture(scope="module")
def big_int8():
    n = 2**31 + 33
    x = torch.randint(-128, 128, (n,), dtype=torch.int8, device="cuda")
    x[-33:] = 127  # the elements past 2^31 carry weight: dropping them changes the sum
    expected = sum(x[i: i + 2**28].sum().item() for i in range(0, n, 2**28))
    yield x, expected
    del x
    torch.cuda.empty_cache()


def test_current_stream_and_device_guard():
    """Runs on the current stream (no implicit sync with the default stream)."""
    s = torch.cuda.Stream()
    x = random_tensor(2**20, torch.float32, "cuda")
    torch.cuda.current_stream().synchronize()
    with torch.cuda.stream(s):
        y = x * 2  # produced on s
        r = reducekit.sum(y)
        r2 = reducekit.sum(y, method="two_pass")
    s.synchronize()
    assert_sum_ok(r, y)
    assert_sum_ok(r2, y)


def test_concurrent_streams_single_pass():
    """single_pass keeps a counter per stream: reductions racing on several streams stay right."""
    streams = [torch.cuda.Stream() for _ in range(4)]
    xs = [random_tensor(2**22 + i, torch.float32, "cuda") for i in range(4)]
    torch.cuda.synchronize()
    results = []
    for _ in range(10):
        for s, x in zip(streams, xs):
            with torch.cuda.stream(s):
                results.append((reducekit.sum(x, method="single_pass"), x))
    torch.cuda.synchronize()
    for r, x in results:
        assert_sum_ok(r, x, torch.float32)


@pytest.mark.parametrize("method", ["auto", "single_pass", "two_pass", "vectorized", "cub_device", "block_atomic", "lock"])
def test_cuda_graph_replay(method):
    """Captured once, replayed on new data: counters reset themselves, workspace is reused."""
    n = 2**20 + 7
    static_x = random_tensor(n, torch.float32, "cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        reducekit.sum(static_x, method=method)  # warm-up outside the graph
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = reducekit.sum(static_x, method=method)
    for _ in range(5):
        fresh = random_tensor(n, torch.float32, "cuda")
        static_x.copy_(fresh)
        g.replay()
        torch.cuda.synchronize()
        assert_sum_ok(static_out.clone(), fresh, torch.float32)
    # eager calls between replays share nothing with the graph
    assert_sum_ok(reducekit.sum(static_x, method=method), static_x, torch.float32)


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
        torch.library.opcheck(torch.ops.reducekit.sum.default, (x, method))


def test_autograd_cuda():
    x = torch.randn(100, 3, device="cuda", requires_grad=True)
    reducekit.sum(x).backward()
    assert torch.equal(x.grad, torch.ones_like(x))


def test_single_pass_configs_agree():
    """Every compiled single_pass configuration and grid gives a correct result."""
    x = random_tensor(2**21 + 3, torch.float32, "cuda")
    configs = reducekit._C.single_pass_configs()
    assert (512, 4) in configs and len(configs) >= 6
    for block, unroll in configs:
        for grid in (0, 1, 7, 1000):
            r = torch.ops.reducekit._single_pass(x[1:], block, unroll, grid)
            assert_sum_ok(r, x[1:], torch.float32)
            assert same_bits(torch.ops.reducekit._single_pass(x[1:], block, unroll, grid, False), r), "PDL changed the result"
    with pytest.raises(ValueError, match=r"\(block=384, unroll=4\) is not a compiled configuration"):
        torch.ops.reducekit._single_pass(x, 384, 4, 0)
    with pytest.raises(ValueError, match="grid=-1 is out of range"):
        torch.ops.reducekit._single_pass(x, 512, 4, -1)
    with pytest.raises(ValueError, match="unroll must be 4, 8 or 16, got 3"):
        torch.ops.reducekit._read_probe(x[: 2**21], 512, 3, 1)


def test_auto_accuracy_beats_torch():
    """float32 accumulates in float64: mixed magnitudes 1e-8..1e8."""
    n = 2**24
    mags = torch.exp(torch.empty(n, device="cuda", dtype=torch.float64).uniform_(math.log(1e-8), math.log(1e8)))
    x = (torch.randn(n, device="cuda", dtype=torch.float64).sign() * mags).float()
    ref = x.double().sum().item()
    err_auto = abs(reducekit.sum(x).double().item() - ref)
    err_torch = abs(torch.sum(x).double().item() - ref)
    assert err_auto <= err_torch
    assert err_auto * 10 <= err_torch or err_auto <= 1e-9 * abs(x.double()).sum().item()
