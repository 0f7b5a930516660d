"""Fixtures every integration test gets (pytest loads this file itself); the helpers tests
import are in tvtest.py."""
import pytest

import tvtest


@pytest.fixture(autouse=True)
def no_leftovers():
    """Nothing a test started may survive it, whatever the test asserted: every process whose
    environment carries tvtest.MARKER=tvtest.SESSION... is SIGKILLed after each test."""
    yield
    tvtest.kill_marked()
