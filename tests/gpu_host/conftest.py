from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Test helpers (gpu_guest) live beside this file; importlib import mode adds no test folder to sys.path.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_guest import Gpu


@pytest.fixture(scope="module")
def gpu():
    g = Gpu()
    yield g
    g.close()
