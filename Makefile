# Two commands do everything on a machine that has Python 3.10+:
#   make run    installs what is missing and prints a short benchmark (reducekit methods vs torch.sum)
#   make test   installs what is missing and runs the whole test suite
#
# torch: an installed torch is used as it is. Where none is installed, TORCH_SPEC is installed;
# its default, torch==2.13.0, resolves to the CPU build where pip's configuration offers it (as on
# our CI machines). On a GPU machine, install the CUDA build of torch for your driver first, by
# PyTorch's own instructions; an unpinned `pip install torch` may pull several GB of CUDA wheels.
PYTHON ?= python3
TORCH_SPEC ?= torch==2.13.0
PIP = $(PYTHON) -m pip

.PHONY: run test install deps build bench

run: install
	cd benchmarks && $(PYTHON) bench.py --quick

test: install
	@$(PYTHON) -c "import pytest, pytest_timeout, expecttest, matplotlib, hypothesis" 2>/dev/null || $(PIP) install -q pytest pytest-timeout expecttest matplotlib hypothesis
	cd tests && $(PYTHON) -m pytest -q

install: deps build

# numpy: torch imports it at start-up (without it every run warns "Failed to initialize NumPy").
deps:
	@$(PYTHON) -c "import torch" 2>/dev/null || $(PIP) install "$(TORCH_SPEC)"
	@$(PYTHON) -c "import setuptools, wheel, ninja, numpy" 2>/dev/null || $(PIP) install -q setuptools wheel ninja numpy

build:
	$(PIP) install -q --no-build-isolation --no-deps .

# Full sweep into benchmarks/results/<dir> (GPU machine; see benchmarks/device_run.sh).
bench: install
	cd benchmarks && $(PYTHON) bench.py --out results/local
