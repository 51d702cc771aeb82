"""Seeded random inputs for a model (:func:`random_inputs`), and which values a random
integer input may take so that the model can run on it (:func:`input_ranges`).

tilegraph-run draws the inputs the user does not give, tilegraph-opt ``--check-each-pass``
the inputs it checks every pass on. Uniform small integers make a model
die where an input is an index: BERT's ``token_type_ids`` index a 2-row table, so a drawn 5
is out of range inside Gather. :func:`input_ranges` reads, from the graph, what each integer
input is used for:

* **an index**: the input reaches the ``indices`` operand of a ``graph.gather`` whose data is
  a constant table, through ops that keep its values (Cast, Unsqueeze, Squeeze, Reshape,
  Expand, Flatten, Transpose, Identity; it must be the op's data operand) and the addition or
  subtraction of a scalar integer constant (which shifts the range). Its values are drawn in
  ``[0, rows)`` of the table (``rows``: the size of the gathered axis), the intersection
  over every table it indexes, shifted back by the constants added on the way;
* **a mask**: the input reaches the condition of a ``graph.where``, or, after a Cast to a
  float type, a ``graph.mul`` (through the same ops and any scalar constant added or
  subtracted: ``1 - mask`` then ``* -10000``), or its name contains ``mask``. Its values are
  drawn in {0, 1} (within the index range if it is an index too).

Other integer inputs keep the default ``[0, 10)``; bool inputs are {0, 1} anyway.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from tilegraph.dialects.entry import entry_function, input_names
from tilegraph.dialects.graph import ConstantOp, GraphOp
from tilegraph.dialects.graph.base import constant_value
from tilegraph.dialects.layout_type import TensorType

DEFAULT_INT_RANGE = (0, 10)
"""Where an integer input with no known use is drawn: ``[0, 10)``."""

# ops whose result holds the values of their first operand (reshaped, broadcast or cast)
_KEEPS_VALUES = frozenset(
    {
        "graph.cast",
        "graph.unsqueeze",
        "graph.squeeze",
        "graph.reshape",
        "graph.expand",
        "graph.flatten",
        "graph.transpose",
        "graph.identity",
    }
)


@dataclass(frozen=True)
class _Path:
    """A value reached from an input: ``value == input + offset`` (offset None once the
    relation is lost, e.g. after ``c - input`` or adding a float), ``floated`` once a Cast to
    a float type was on the way."""

    value: SSAValue
    offset: int | None
    floated: bool


@dataclass
class _Uses:
    """What one input was found to be used as."""

    low: int | None = None  # the index range [low, high), None: not an index
    high: int | None = None
    mask: bool = False

    def index_into(self, low: int, high: int) -> None:
        self.low = low if self.low is None else max(self.low, low)
        self.high = high if self.high is None else min(self.high, high)


def input_ranges(module: ModuleOp) -> dict[str, tuple[int, int]]:
    """The half-open range ``[low, high)`` to draw each integer input of the entry function
    from (see the module docstring); inputs of other element types are left out."""
    fn = entry_function(module)
    args = fn.body.blocks[0].args
    out: dict[str, tuple[int, int]] = {}
    for name, arg in zip(input_names(fn), args, strict=True):
        t = arg.type
        if not isinstance(t, TensorType) or np.dtype(t.dtype.numpy).kind not in "iu":
            continue
        uses = _Uses(mask="mask" in name.lower())
        for path in _reached(arg):
            _classify(path, uses)
        out[name] = _range(uses)
    return out


def _range(uses: _Uses) -> tuple[int, int]:
    """The range ``uses`` allow: the index range (the default where there is none or it is
    empty), narrowed to {0, 1} for a mask when that leaves something."""
    low, high = DEFAULT_INT_RANGE
    if uses.low is not None and uses.high is not None and uses.low < uses.high:
        low, high = uses.low, uses.high
    if uses.mask and max(low, 0) < min(high, 2):
        return max(low, 0), min(high, 2)
    return low, high


def _reached(arg: SSAValue) -> Iterator[_Path]:
    """Every value reached from ``arg`` through value-keeping ops and scalar additions, with
    its relation to ``arg`` (``arg`` itself first)."""
    seen: set[tuple[int, int | None, bool]] = set()
    stack = [_Path(arg, 0, False)]
    while stack:
        path = stack.pop()
        key = (id(path.value), path.offset, path.floated)
        if key in seen:
            continue
        seen.add(key)
        yield path
        for use in path.value.uses:
            stack.extend(_through(use.operation, use.index, path))


def _through(op: Operation, index: int, path: _Path) -> list[_Path]:
    """The values of ``op`` that still carry ``path``'s values when it reads them as operand
    ``index`` (none when the op changes them beyond a scalar shift)."""
    if not op.results:
        return []
    result = op.results[0]
    if op.name in _KEEPS_VALUES and index == 0:
        t = result.type
        floated = path.floated or (
            isinstance(t, TensorType) and np.dtype(t.dtype.numpy).kind == "f"
        )
        return [_Path(result, path.offset, floated)]
    if op.name in ("graph.add", "graph.sub") and len(op.operands) == 2:
        shift = _scalar(op.operands[1 - index])
        if shift is None:
            return []
        offset = path.offset
        if offset is not None:
            if isinstance(shift, float) or (op.name == "graph.sub" and index == 1):
                offset = None  # c - x, or a float shift: no longer an index
            else:
                offset = offset + shift if op.name == "graph.add" else offset - shift
        return [_Path(result, offset, path.floated)]
    return []


def _scalar(value: SSAValue) -> int | float | None:
    """The value of a one-element constant (an int for integer data), else None."""
    data = constant_value(value)
    if data is None or data.size != 1:
        return None
    item = data.reshape(()).item()
    return item if isinstance(item, int | float) and not isinstance(item, bool) else None


def _classify(path: _Path, uses: _Uses) -> None:
    """Record in ``uses`` what each op reading ``path.value`` uses it as."""
    for use in path.value.uses:
        op = use.operation
        if op.name == "graph.where" and use.index == 0:
            uses.mask = True
        elif op.name == "graph.mul" and path.floated:
            uses.mask = True
        elif op.name == "graph.gather" and use.index == 1 and path.offset is not None:
            rows = _table_rows(op)
            if rows is not None:
                uses.index_into(-path.offset, rows - path.offset)


def _table_rows(gather: Operation) -> int | None:
    """The size of the gathered axis of a Gather's data when the data is a constant table."""
    data = gather.operands[0]
    t = data.type
    if not isinstance(data.owner, ConstantOp) or not isinstance(t, TensorType) or not t.rank:
        return None
    axis = int(gather.attr("axis")) if isinstance(gather, GraphOp) else 0
    rows = t.origin_shape[axis % t.rank]
    return rows if isinstance(rows, int) and rows > 0 else None


def random_inputs(
    module: ModuleOp,
    seed: int,
    shapes: Mapping[str, tuple[int, ...]],
    given: Mapping[str, np.ndarray],
) -> dict[str, np.ndarray]:
    """``given`` arrays plus seeded random ones of ``shapes`` for the other inputs (an
    input missing from ``shapes`` gets its static dims and 1 for every dynamic one): floats
    standard normal, bools {0, 1}, integers in the range their use in the model allows
    (:func:`input_ranges`: within the table an index input
    gathers from, {0, 1} for a mask, else ``[0, 10)``)."""
    rng = np.random.default_rng(seed)
    ranges = input_ranges(module)
    fn = entry_function(module)
    out: dict[str, np.ndarray] = {}
    for name, t in zip(input_names(fn), fn.function_type.inputs.data, strict=True):
        if name in given:
            out[name] = given[name]
            continue
        assert isinstance(t, TensorType)
        shape = shapes.get(name) or tuple(
            d if isinstance(d, int) and d >= 0 else 1 for d in t.origin_shape
        )
        dtype = np.dtype(t.dtype.numpy)  # the kind of values; given in the declared type
        if dtype.kind == "f":
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind == "b":
            value = rng.integers(0, 2, shape).astype(dtype)
        else:
            low, high = ranges.get(name, DEFAULT_INT_RANGE)
            value = rng.integers(low, high, shape).astype(dtype)
        out[name] = value.astype(t.dtype.exact_numpy)
    return out
