"""Shape functions and the active :class:`ShapeEnv`: deciding on symbolic dims with guards.

Shape functions are pure classmethods of the graph ops; they cannot take a ShapeEnv
argument without every caller knowing about it. Instead a compilation that has concrete
input sizes (a :class:`~tilegraph.runtime.session.Session`, ``load_onnx(..., shape_env=)``)
makes its env *active* for the time it builds and optimises the module, and the shape
functions ask this module:

- :func:`decide` for a branch choice (broadcast ``s0 == s1`` vs ``s0 == 1``): known
  statically, the answer; with an active env, the answer on the hints, recorded as an
  expect guard; with none, ``None`` (the caller gives up precision: an unknown dim).
- :func:`require` for a hard constraint (MatMul's K equality, Reshape divisibility,
  Slice bounds): statically false, a :class:`ShapeError`; with an active env, an assert
  guard (false on the hints: a ``ShapeError`` naming the op, the condition and the
  values); with none, nothing is checked.

Guards name the op that needed them: :func:`inferring` sets the label (the importer uses the
ONNX node's name; otherwise the op class name is used).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import sympy

from tilegraph.symbolic.env import ShapeEnv
from tilegraph.symbolic.guards import GuardError
from tilegraph.symbolic.reasoning import decide as decide_statically

_ENV: ContextVar[ShapeEnv | None] = ContextVar("tilegraph_shape_env", default=None)
_OP: ContextVar[str | None] = ContextVar("tilegraph_shape_op", default=None)


class ShapeError(ValueError):
    """A shape function found inconsistent operands or attributes, or a shape constraint
    that is false (statically, or on the hints of the active env). The graph dialect
    re-exports it; defined here so that :func:`require` can raise it."""


class DimSizesNeeded(ShapeError):
    """A result's rank depends on the run-time size of a symbolic dim of ``operand`` (the
    index of the operand whose shape decides it): ONNX Squeeze without ``axes`` removes
    every dim that is 1, so ``[batch, 1, 2]`` gives rank 1 or 2 by ``batch``. The importer
    turns it into a request to import again with the input shapes bound."""

    def __init__(self, message: str, operand: int = 0) -> None:
        super().__init__(message)
        self.operand = operand


def active_env() -> ShapeEnv | None:
    """The ShapeEnv shape functions record guards in (None outside a compilation)."""
    return _ENV.get()


@contextmanager
def shape_env(env: ShapeEnv | None) -> Iterator[ShapeEnv | None]:
    """Make ``env`` the active ShapeEnv inside the ``with`` block (None: none)."""
    token = _ENV.set(env)
    try:
        yield env
    finally:
        _ENV.reset(token)


@contextmanager
def inferring(op_label: str) -> Iterator[None]:
    """Shape inference inside the block is for the op ``op_label`` (guards name it)."""
    token = _OP.set(op_label)
    try:
        yield
    finally:
        _OP.reset(token)


@contextmanager
def inferring_unless_labelled(op_name: str) -> Iterator[None]:
    """Like :func:`inferring`, unless a caller already named the op (the importer's node
    name beats the op class name that ``GraphOp.make`` gives)."""
    if _OP.get() is not None:
        yield
        return
    with inferring(op_name):
        yield


def _label(default: str) -> str:
    return _OP.get() or default or "an unnamed op"


def decide(cond: sympy.Basic | bool, reason: str, op: str = "") -> bool | None:
    """A branch choice on symbolic dims: True/False, recorded as an expect guard when it
    took the hints to know; None when it is unknown and no env is active."""
    cond = sympy.sympify(cond)
    env = _ENV.get()
    if env is not None:
        return env.expect(cond, op=_label(op), reason=reason)
    return decide_statically(cond, {}, set())


def require(cond: sympy.Basic | bool, reason: str, op: str = "") -> None:
    """A hard constraint on symbolic dims: raises :class:`ShapeError` when it is
    false (statically, or on the hints of the active env, which records an assert guard)."""
    cond = sympy.sympify(cond)
    env = _ENV.get()
    if env is not None:
        try:
            env.assert_(cond, op=_label(op), reason=reason)
        except GuardError as e:
            raise ShapeError(str(e)) from None
        return
    if decide_statically(cond, {}, set()) is False:
        raise ShapeError(f"{reason}: {sympy.sstr(cond)} does not hold")


def simplify(expr: sympy.Expr) -> sympy.Expr | int:
    """``expr`` with the active env's replacements applied (as it is without an env)."""
    env = _ENV.get()
    return env.simplify(expr) if env is not None else expr
