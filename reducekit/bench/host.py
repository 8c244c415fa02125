"""Host time of small eager calls: host_us (any calls), host_run (the dims run's figures: torch.sum
and reducekit.sum on HOST_N float32 elements, full and dim=0)."""
from __future__ import annotations

import statistics
import time

import torch

import reducekit

from .timing import _err, random_input


def host_us(fns: dict, x: torch.Tensor, calls: int = 200, samples: int = 25) -> dict:
    """Median host time per call (us) of each fn: wall time of `calls` back-to-back calls, few
    enough for the launch queue to hold them all, so that the host never waits for the GPU. The
    fns alternate sample by sample; the GPU is drained between samples, outside the timing (the
    method of tests/test_perf.py's host_us). On a CPU tensor: wall time per call."""
    sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    out = {k: [] for k in fns}
    for fn in fns.values():
        for _ in range(calls):
            fn(x)
    sync()
    for _ in range(samples):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn(x)
            out[k].append((time.perf_counter() - t0) / calls * 1e6)
            sync()
    return {k: statistics.median(v) for k, v in out.items()}


HOST_N = 1024
HOST_CALLS = {  # call -> the torch.sum call it is compared with (None: a baseline)
    "torch.sum(x)": None, "reducekit.sum(x)": "torch.sum(x)",
    "torch.sum(x, dim=0)": None, "reducekit.sum(x, dim=0)": "torch.sum(x, dim=0)",
}


def host_run(device, calls: int = 200, samples: int = 25) -> dict:
    """Host time of eager calls on HOST_N float32 elements (1-D, so dim=0 reduces everything, through
    the dims path): torch.sum and reducekit.sum, full and dim=0. A call that raises is left out and
    its error kept."""
    x = random_input(HOST_N, torch.float32, device)
    fns = {"torch.sum(x)": torch.sum, "reducekit.sum(x)": reducekit.sum,
           "torch.sum(x, dim=0)": lambda v: torch.sum(v, 0), "reducekit.sum(x, dim=0)": lambda v: reducekit.sum(v, dim=0)}
    errors = {}
    for k in list(fns):
        try:
            fns[k](x)
        except Exception as e:  # noqa: BLE001 - reported
            errors[k] = _err(e)
            del fns[k]
    t = host_us(fns, x, calls, samples) if fns else {}
    excess = {k: round(t[k] - t[base], 3) for k, base in HOST_CALLS.items() if base and k in t and base in t}
    return {"n": HOST_N, "dtype": "float32", "device": str(x.device), "calls": calls, "samples": samples,
            "us": {k: round(v, 3) for k, v in t.items()}, "excess_us": excess, "errors": errors}
