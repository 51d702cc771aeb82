"""Execution: the reference interpreter (graph and layout dialects on numpy)."""

from tilegraph.dialects.entry import InputError
from tilegraph.runtime.reference import run_reference

__all__ = ["InputError", "run_reference"]
