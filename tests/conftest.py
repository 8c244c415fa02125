import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import reducekit  # noqa: E402
from helpers import BASE_SEED, CUDA  # noqa: E402


def pytest_report_header(config):
    lines = [f"reducekit: data seed REDUCEKIT_SEED={BASE_SEED} (set it to reproduce a run's data)"]
    if reducekit._C.fault != "none":
        lines.append(f"reducekit: *** PLANTED FAULT '{reducekit._C.fault}' compiled in: this build is wrong on purpose ***")
    return lines


def pytest_collection_modifyitems(config, items):
    import torch

    if torch.cuda.is_available() and not reducekit._C.cuda_built and os.environ.get("REDUCEKIT_ALLOW_CPU_BUILD") != "1":
        # Skipping every GPU test here would pass a build that never compiled the kernels.
        raise pytest.UsageError(
            "reducekit was built without CUDA on a machine with a GPU, so the GPU tests cannot run. Rebuild with a CUDA "
            "build of torch and nvcc (CUDA_HOME) present: pip install --no-build-isolation . (set "
            "REDUCEKIT_ALLOW_CPU_BUILD=1 to run the CPU tests alone on purpose).")
    if CUDA:
        return
    gpu = [it for it in items if "cuda" in it.keywords or "perf" in it.keywords]
    if gpu:
        items[:] = [it for it in items if not ("cuda" in it.keywords or "perf" in it.keywords)]
        config.hook.pytest_deselected(items=gpu)
        config._rk_deselected = len(gpu)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    n = getattr(config, "_rk_deselected", 0)
    if n:
        terminalreporter.write_line(f"reducekit: {n} CUDA tests deselected: no CUDA GPU, or a CPU-only build of reducekit")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        rep.sections.append(("reducekit data seed", f"reproduce: REDUCEKIT_SEED={BASE_SEED} python -m pytest '{item.nodeid}'"))
