"""Hypothesis profiles: ``default`` (derandomized, CI-sized) and ``thorough`` (``make
test-all`` sets ``HYPOTHESIS_PROFILE=thorough``: five times the examples, fresh seeds)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "default", derandomize=True, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=_SLOW_DATA, max_examples=500
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
