"""Argument types of the command-line tools: numbers checked where they are parsed.

A tolerance, a seed or a count outside its range is refused by argparse with the option's
name and the value given (``tilegraph-run: error: argument --rtol: expected a finite number
>= 0, got '-1'``, exit 2) instead of reaching the code that uses it, where a negative
tolerance turned every comparison into a failure and a negative seed into an internal error.
"""

from __future__ import annotations

import argparse
import math


def non_negative_float(text: str) -> float:
    """A finite float >= 0 (tolerances)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, got {text!r}")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0 (seeds of numpy's generators, size limits)."""
    return _int_at_least(text, 0)


def positive_int(text: str) -> int:
    """An integer >= 1 (counts)."""
    return _int_at_least(text, 1)


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise argparse.ArgumentTypeError(f"expected an integer >= {least}, got {text!r}")
    return value
