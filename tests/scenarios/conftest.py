"""The scenarios share the integration tests' helpers (tvtest.py) and their `no_leftovers`
fixture: every process a scenario started is killed after it, whatever it asserted."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

import pytest  # noqa: E402

import tvtest  # noqa: E402


@pytest.fixture(autouse=True)
def no_leftovers():
    yield
    tvtest.kill_marked()
