"""Hypothesis profiles: ``default`` (derandomized, CI-sized) and ``thorough`` (``make
test-all`` sets ``HYPOTHESIS_PROFILE=thorough``: five times the examples, fresh seeds).

After each test module the heap that survives it (cached models, node cases, contexts) is
frozen out of the cyclic garbage collector: otherwise every later full collection walks it,
and a test late in the run was measured 2.5-4x slower than alone (37-65 s instead of 16 s).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "default", derandomize=True, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=_SLOW_DATA, max_examples=500
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="module")
def _freeze_surviving_heap() -> Iterator[None]:
    yield
    gc.collect()
    gc.freeze()
