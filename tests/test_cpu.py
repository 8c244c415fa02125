"""reducekit.sum on CPU tensors: semantics of torch.sum, errors, and torch integration."""
import math
import os

import numpy as np
import pytest
import torch

import reducekit
from helpers import (ALL_DTYPES, FLOAT_DTYPES, SIZES, assert_sum_ok, cancelling_tensor, exact_sum, generator, random_tensor, same_bits,
                     sum_bound)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_auto_matches_torch_sum(dtype, n):
    x = random_tensor(n, dtype, "cpu", generator("cpu", "cpu_matrix", str(dtype), n))
    before = x.clone()
    assert_sum_ok(reducekit.sum(x), x, seed_key=("cpu_matrix", str(dtype), n))
    assert same_bits(x, before), "input modified"


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_views(dtype):
    base = random_tensor(3 * 4097 + 7, dtype, "cpu", generator("cpu", "cpu_views", str(dtype)))
    for view in (base[3:4100], base[1::3], base[: 64 * 64].view(64, 64).t(), base[5:5 + 2 * 333].view(2, 333)[:, 1:]):
        assert_sum_ok(reducekit.sum(view), view)


def test_shapes_and_empty():
    # Against the exact sum within the method's bound: torch.sum's float32 accumulation is itself
    # off by more than allclose's rtol on cancelling draws, so comparing with it was flaky.
    for shape in [(), (0,), (3, 0, 2), (2, 3, 5), (1,)]:
        x = torch.randn(shape, generator=generator("cpu", "shapes", shape))
        assert_sum_ok(reducekit.sum(x), x, seed_key=("shapes", shape))
    assert reducekit.sum(torch.empty(0, dtype=torch.int8)).dtype == torch.int64
    assert reducekit.sum(torch.empty(0, dtype=torch.float16)).item() == 0


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_nan_inf_propagate(dtype):
    x = random_tensor(1000, dtype, "cpu")
    y = x.clone(); y[17] = float("nan")
    assert math.isnan(reducekit.sum(y).item())
    y = x.clone(); y[3] = float("inf")
    assert reducekit.sum(y).item() == math.inf
    y[500] = -float("inf")
    assert math.isnan(reducekit.sum(y).item())


def test_output_never_aliases_input():
    x = torch.tensor(5.0)
    r = reducekit.sum(x)
    assert r.data_ptr() != x.data_ptr()
    r.add_(1)
    assert x.item() == 5.0


def test_deterministic_independent_of_threads():
    x = random_tensor(3_000_001, torch.float32, "cpu")
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        a = reducekit.sum(x)
        torch.set_num_threads(max(2, old))
        b = reducekit.sum(x)
    finally:
        torch.set_num_threads(old)
    assert same_bits(a, b)


def test_float64_accumulation_accuracy():
    """float32 accumulates in float64: on cancelling data the result is within the float64 tree
    error plus half an ulp of float32, a bound that float32 accumulation misses (checked with
    numpy's pairwise float32 sum, so the data really separates the two)."""
    x = cancelling_tensor(1 << 20, "cpu", generator("cpu", "cpu_accuracy"))
    ref = exact_sum(x)
    b = sum_bound(x, "auto", ref)
    assert abs(reducekit.sum(x).double().item() - ref) <= b
    f32 = float(np.sum(x.numpy(), dtype=np.float32))
    assert abs(f32 - ref) > 10 * b, "the data does not separate float32 from float64 accumulation"


def test_float16_overflow_and_int64_wraparound():
    big = torch.full((3000,), 30.0, dtype=torch.float16)
    assert torch.sum(big).item() == math.inf and reducekit.sum(big).item() == math.inf
    w = torch.tensor([2**62, 2**62, 2**62, 7, -(2**61)] * 37, dtype=torch.int64)
    assert reducekit.sum(w).item() == torch.sum(w).item()


def test_memory_flat_over_10000_calls():
    x = random_tensor(4097, torch.float32, "cpu")
    for _ in range(100):
        reducekit.sum(x)
    with open("/proc/self/statm") as f:
        rss0 = int(f.read().split()[1])
    for _ in range(10_000):
        reducekit.sum(x)
    with open("/proc/self/statm") as f:
        grew = (int(f.read().split()[1]) - rss0) * os.sysconf("SC_PAGE_SIZE")
    assert grew < 4 << 20, f"host memory grew by {grew >> 10} KiB over 10,000 calls"


def test_errors_are_clear():
    with pytest.raises(ValueError, match=r"unknown method 'fastest'.*Valid methods: auto, atomic_global"):
        reducekit.sum(torch.ones(3), method="fastest")
    with pytest.raises(NotImplementedError, match=r"method 'tree_sequential' runs on CUDA only, but the input is on cpu"):
        reducekit.sum(torch.ones(3), method="tree_sequential")
    with pytest.raises(TypeError, match=r"dtype Float8_e4m3fn is not supported. Supported dtypes: bool, uint8.*complex128"):
        reducekit.sum(torch.ones(3).to(torch.float8_e4m3fn))
    with pytest.raises(TypeError, match=r"layout Sparse is not supported.*to_dense"):
        reducekit.sum(torch.ones(3).to_sparse())
    with pytest.raises(TypeError, match=r"layout SparseCsr is not supported"):
        reducekit.sum(torch.ones(3, 3).to_sparse_csr())
    with pytest.raises(NotImplementedError, match=r"quantized tensors \(QInt8\) are not supported"):
        reducekit.sum(torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.qint8))
    with pytest.raises(TypeError, match=r"input must be a torch.Tensor, got list"):
        reducekit.sum([1, 2, 3])
    with pytest.raises(TypeError, match=r"method must be a str naming a method \(see reducekit.methods\(\)\), got int 3"):
        reducekit.sum(torch.ones(3), method=3)
    with pytest.raises(TypeError, match=r"method must be a str .* got NoneType None"):
        reducekit.sum(torch.ones(3), method=None)
    with pytest.raises(TypeError, match=r"uint16 is not supported|UInt16 is not supported"):
        reducekit.sum(torch.ones(3, dtype=torch.uint16))


@pytest.mark.parametrize("name", [m.name for m in reducekit.methods() if "cpu" not in m.devices])
def test_cuda_only_methods_raise_on_cpu(name):
    with pytest.raises(NotImplementedError, match=rf"method '{name}' runs on CUDA only.*input.cuda\(\)"):
        reducekit.sum(torch.ones(10), method=name)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool], ids=str)
def test_opcheck(dtype):
    x = random_tensor(1000, dtype, "cpu")
    torch.library.opcheck(torch.ops.reducekit.sum.default, (x,), {"method": "auto"})
    torch.library.opcheck(torch.ops.reducekit.sum.default, (x.view(10, 100)[:, ::3],))


def test_autograd():
    x = torch.randn(7, 5, requires_grad=True)
    reducekit.sum(x).mul(3).backward()
    assert torch.equal(x.grad, torch.full((7, 5), 3.0))
    torch.autograd.gradcheck(lambda t: reducekit.sum(t), (torch.randn(6, dtype=torch.float64, requires_grad=True),))


def test_torch_compile_traces():
    f = torch.compile(lambda t: reducekit.sum(t) * 2 + 1, backend="aot_eager", fullgraph=True)
    x = torch.randn(999, generator=generator("cpu", "compile"))
    # the compiled graph runs the same op: the same bits as the eager call
    assert same_bits(f(x), reducekit.sum(x) * 2 + 1)


def test_torch_ops_entry_point():
    x = random_tensor(4097, torch.int16, "cpu")
    assert torch.ops.reducekit.sum(x).item() == x.sum().item()
    assert torch.ops.reducekit.sum(x, method="auto").item() == x.sum().item()
