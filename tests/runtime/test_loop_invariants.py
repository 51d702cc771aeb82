"""The fast executor's device loops load a loop-invariant operand once per loop
(:mod:`tilegraph.runtime.fast_executor.invariants`): the recurrent weight of an RNN loop,
not its state; the same results as loading it every step, and as the interpreter."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tilegraph
from tests.lowering.test_loop_launches import T, _inputs, _module, _rnn_loop_model
from tilegraph.dialects.graph.dense import ArrayBlob
from tilegraph.runtime.fast_executor import invariants
from tilegraph.runtime.tiles import fast_module


def _held_handles(fast: Any) -> dict[str, str]:
    """Handle -> generated function of every load the source guards as held."""
    found = {}
    for name, text in fast._sources.items():
        lines = text.splitlines()
        for at, line in enumerate(lines):
            if line.strip().startswith("if __inv.run("):
                handle = re.match(r"\s*(k\d+)\(", lines[at + 1])
                assert handle is not None, lines[at + 1]
                found[handle.group(1)] = name
    return found


def _counting(fast: Any, handles: list[str]) -> Counter[str]:
    calls: Counter[str] = Counter()
    for handle in handles:
        kernel = fast.namespace[handle]

        def counted(*args: Any, _k: Callable[..., Any] = kernel, _h: str = handle) -> Any:
            calls[_h] += 1
            return _k(*args)

        fast.namespace[handle] = counted
    return calls


def test_the_recurrent_weight_is_loaded_once_per_loop_the_state_every_step():
    model = _rnn_loop_model(counted=False)
    compiled = tilegraph.compile(model, platform="test")
    first = compiled(**_inputs())
    fast = fast_module(_module(compiled))
    ops = Counter(op for _, op in fast.invariant_ops)
    assert ops, "no load found loop-invariant"
    handles = _held_handles(fast)
    assert handles
    calls = _counting(fast, list(handles))
    again = compiled(**_inputs())
    held = [h for h in handles if calls[h] < T]
    stepped = [h for h in handles if calls[h] == T]
    # R (a constant) is loaded once per loop; h (the state, rewritten every step) on
    # every step although its loads are guarded too
    assert held and stepped, dict(calls)
    assert all(calls[h] in (1, T) for h in handles), dict(calls)
    assert not invariants._ENTRIES and not invariants._DERIVED  # dropped after the loop
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_held_loads_give_the_bytes_of_loading_every_step(monkeypatch: pytest.MonkeyPatch):
    model = _rnn_loop_model(counted=True)
    compiled = tilegraph.compile(model, platform="test")
    held = compiled(**_inputs())
    with monkeypatch.context() as patch:  # nothing frozen: every load runs every step
        patch.setattr(invariants, "frozen", lambda array: False)
        every_step = compiled(**_inputs())
    for a, b in zip(held, every_step, strict=True):
        np.testing.assert_array_equal(a, b)
    interpreted = tilegraph.compile(model, platform="test", executor="interpret")
    for a, b in zip(held, interpreted(**_inputs()), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_frozen_needs_every_base_read_only():
    base = np.arange(6.0)
    view = base[1:]
    view.flags.writeable = False
    assert not invariants.frozen(view)  # the base may still be written
    blob = ArrayBlob.of(np.arange(6.0))
    assert blob.array is not None and invariants.frozen(blob.array[2:])
    assert not invariants.frozen(np.arange(3))


def test_nothing_is_held_outside_a_device_loop():
    constant = ArrayBlob.of(np.ones(4)).array
    assert constant is not None
    found = invariants.entry("f", (constant,), ((0,),), 0, 1, 0)
    assert found.held == (False,) and found.run(0)
    assert invariants.derived(constant, "cols", lambda: 1) is None

    runs: list[bool] = []

    def body() -> None:
        for _ in range(2):  # a fresh view of the same bytes on every step
            runs.append(invariants.entry("f", (constant[:],), ((0,),), 0, 1, 0).run(0))
        runs.append(invariants.entry("f", (constant[1:],), ((0,),), 0, 1, 0).run(0))

    invariants.in_device_loop(body)()
    assert runs == [True, False, True]  # loaded on the first call only, per bytes
    assert not invariants._ENTRIES
