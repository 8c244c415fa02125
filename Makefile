# Two commands do everything on a machine that has Python 3.10+:
#   make run    installs what is missing and prints a short benchmark (reducekit methods vs torch.sum)
#   make test   installs what is missing and runs the whole test suite
#   make notebook  executes benchmarks/notebooks/tour.ipynb in place (outputs saved), on this machine's GPU or CPU
#
# torch: an installed torch is used as it is. Where none is installed, TORCH_SPEC is installed;
# its default, torch==2.13.0, resolves to the CPU build where pip's configuration offers it (as on
# our CI machines). On a GPU machine, install the CUDA build of torch for your driver first, by
# PyTorch's own instructions; an unpinned `pip install torch` may pull several GB of CUDA wheels.
PYTHON ?= python3
TORCH_SPEC ?= torch==2.13.0
PIP = $(PYTHON) -m pip

.PHONY: run test install deps build bench notebook notebook-deps

run: install
	cd benchmarks && $(PYTHON) bench.py --quick

# nbclient, nbformat, ipykernel: tests/test_notebook.py executes the tutorial notebook on this machine.
test: install
	@$(PYTHON) -c "import pytest, pytest_timeout, expecttest, matplotlib, hypothesis, nbclient, nbformat, ipykernel" 2>/dev/null || $(PIP) install -q pytest pytest-timeout expecttest matplotlib hypothesis nbclient nbformat ipykernel
	cd tests && $(PYTHON) -m pytest -q

# The tutorial, executed headless in place. pandas, matplotlib and tqdm are optional (tables, plots, progress bars).
notebook: install notebook-deps
	$(PYTHON) benchmarks/run_notebook.py benchmarks/notebooks/tour.ipynb

notebook-deps:
	@$(PYTHON) -c "import nbclient, nbformat, ipykernel" 2>/dev/null || $(PIP) install -q nbclient nbformat ipykernel

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
