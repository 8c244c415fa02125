import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from helpers import CUDA  # noqa: E402


def pytest_collection_modifyitems(config, items):
    skip_cuda = pytest.mark.skip(reason="needs a CUDA GPU and a CUDA build of reducekit")
    for item in items:
        if not CUDA and ("cuda" in item.keywords or "perf" in item.keywords):
            item.add_marker(skip_cuda)
