"""Numpy-backed constant data: the ``#graph.dense`` attribute.

Constants keep their data as a numpy array (no per-element attributes), so a ResNet-50's
weights cost one array each. Text forms of the payload:

* ``[[1.0, 2.0], [3.0, 4.0]]`` or a scalar ``1.5`` — the values, nested by shape; a scalar
  for a tensor of several elements is a *splat* (every element that value; the shape is the
  type's). Arrays whose elements are all bit-for-bit equal print as a splat whatever their
  size, so a zero bias or a constant of ones prints in full and runs when read back;
* ``"0x..."`` — the raw little-endian bytes, exact and compact (used for large arrays
  when printing of large constants is requested);
* ``__elided__`` — the data was not printed (the default above :data:`ELIDE_LIMIT`); such a
  constant still has a type and verifies, but cannot be executed.

Generic attribute form: ``#graph.dense<f32, [2, 2], [[1.0, 2.0], [3.0, 4.0]]>``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from tilegraph.dialects.element_types import UnsupportedElementType, dtype_of, element_type_of
from tilegraph.formats import parse_dtype

ELIDE_LIMIT: int | None = 16
"""Arrays with more elements print as ``__elided__``; None prints everything."""

HEX_THRESHOLD = 256
"""Arrays with more elements than this print as hex bytes when they are printed at all."""


@contextmanager
def elide_limit(limit: int | None):
    """Temporarily set :data:`ELIDE_LIMIT` (None: print every constant in full)."""
    global ELIDE_LIMIT
    old, ELIDE_LIMIT = ELIDE_LIMIT, limit
    try:
        yield
    finally:
        ELIDE_LIMIT = old


def set_elide_limit(limit: int | None) -> None:
    global ELIDE_LIMIT
    ELIDE_LIMIT = limit


@dataclass(frozen=True, eq=False)
class ArrayBlob:
    """An immutable numpy array (or ``None`` when elided) with value equality."""

    array: np.ndarray | None
    dtype_name: str
    shape: tuple[int, ...]

    @staticmethod
    def of(array: np.ndarray, dtype: str | None = None) -> ArrayBlob:
        a = np.asarray(array)
        if not a.flags.c_contiguous or a.flags.writeable:
            a = a.copy(order="C")  # ascontiguousarray would turn a 0-d array into 1-d
        a.setflags(write=False)
        return ArrayBlob(a, dtype or str(parse_dtype(a.dtype)), tuple(a.shape))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ArrayBlob):
            return NotImplemented
        if (self.dtype_name, self.shape) != (other.dtype_name, other.shape):
            return False
        if self.array is None or other.array is None:
            return self.array is other.array
        return self.array.tobytes() == other.array.tobytes()

    def __hash__(self) -> int:
        head = b"" if self.array is None else self.array.tobytes()[:64]
        return hash((self.dtype_name, self.shape, head))


def _format_scalar(v: Any, kind: str) -> str:
    if kind == "b":
        return "true" if v else "false"
    if kind in "iu":
        return str(int(v))
    f = float(v)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    text = repr(v.item()) if kind == "f" and v.dtype == np.float64 else str(v)
    return text if any(c in text for c in ".en") else text + ".0"


def splat_value(array: np.ndarray) -> np.ndarray | None:
    """The one value (a 0-d array) of an array of two or more elements that are all
    bit-for-bit equal (so ``-0.0`` differs from ``0.0`` and NaNs must share their bits),
    else None."""
    if array.size < 2:
        return None
    flat = np.ascontiguousarray(array).reshape(-1)
    words = flat.view(np.uint8).reshape(flat.size, flat.dtype.itemsize)
    first = words[0]
    # most arrays differ early or late: look there before comparing everything
    for i in (1, flat.size - 1, flat.size // 2):
        if not np.array_equal(words[i], first):
            return None
    if not (words == first).all():
        return None
    return flat[0:1].reshape(())


def format_payload(array: np.ndarray | None) -> str:
    """The payload text of an array, honouring :data:`ELIDE_LIMIT` (a splat is printed as
    its one value at any size: :func:`splat_value`)."""
    if array is not None and (splat := splat_value(array)) is not None:
        array = splat
    if array is None or (ELIDE_LIMIT is not None and array.size > ELIDE_LIMIT):
        return "__elided__"
    if array.size > HEX_THRESHOLD:
        return (
            '"0x'
            + np.ascontiguousarray(array)
            .astype(array.dtype.newbyteorder("<"))
            .tobytes()
            .hex()
            .upper()
            + '"'
        )
    kind = array.dtype.kind

    def rec(a: np.ndarray) -> str:
        if a.ndim == 0:
            return _format_scalar(a[()], kind)
        return "[" + ", ".join(rec(x) for x in a) + "]"

    return rec(array)


def _parse_scalar(parser: AttrParser) -> float | int | bool:
    if (b := parser.parse_optional_boolean()) is not None:
        return b
    negative = parser.parse_optional_punctuation("-") is not None
    if parser.parse_optional_keyword("inf"):
        return -math.inf if negative else math.inf
    if parser.parse_optional_keyword("nan"):
        return math.nan
    value = parser.parse_number()
    assert not isinstance(value, bool)
    return -value if negative else value


def _parse_nested(parser: AttrParser) -> Any:
    if parser.parse_optional_punctuation("["):
        items: list[Any] = []
        if not parser.parse_optional_punctuation("]"):
            items.append(_parse_nested(parser))
            while parser.parse_optional_punctuation(","):
                items.append(_parse_nested(parser))
            parser.parse_punctuation("]")
        return items
    return _parse_scalar(parser)


@dataclass(frozen=True)
class RawPayload:
    """A payload as read from text, before its dtype and shape are known."""

    kind: str  # "values" | "hex" | "elided"
    raw: Any = None


def read_payload(parser: AttrParser) -> RawPayload:
    """Read a payload (see the module docstring) without interpreting it."""
    if parser.parse_optional_keyword("__elided__"):
        return RawPayload("elided")
    text = parser.parse_optional_str_literal()
    if text is not None:
        return RawPayload("hex", text)
    return RawPayload("values", _parse_nested(parser))


def payload_array(payload: RawPayload, dtype_name: str, shape: Sequence[int]) -> np.ndarray | None:
    """The array of ``dtype``/``shape`` a payload denotes (None if elided).

    Raises ``ValueError`` when the payload does not fit.
    """
    dtype = np.dtype(parse_dtype(dtype_name).numpy)
    count = math.prod(shape)
    if payload.kind == "elided":
        return None
    if payload.kind == "hex":
        text: str = payload.raw
        if not text.startswith("0x"):
            raise ValueError('expected a hex payload "0x..."')
        raw = bytes.fromhex(text[2:])
        if len(raw) != dtype.itemsize * count:
            raise ValueError(
                f"hex payload has {len(raw)} bytes, the type needs {dtype.itemsize * count}"
            )
        return np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)
    try:
        array = np.array(payload.raw, dtype=dtype)
    except (ValueError, OverflowError, TypeError) as e:
        raise ValueError(f"invalid constant payload: {e}") from None
    if array.ndim == 0 and count != 1:
        array = np.full(shape, array, dtype=dtype)  # splat
    if array.size != count:
        raise ValueError(f"constant payload has {array.size} elements, the type needs {count}")
    return array.reshape(shape)


@irdl_attr_definition
class DenseAttr(Data[ArrayBlob]):
    """Constant tensor data backed by a read-only numpy array."""

    name = "graph.dense"

    @staticmethod
    def from_array(array: np.ndarray, dtype: str | None = None) -> DenseAttr:
        return DenseAttr(ArrayBlob.of(array, dtype))

    @staticmethod
    def elided(dtype: str, shape: Sequence[int]) -> DenseAttr:
        return DenseAttr(ArrayBlob(None, str(parse_dtype(dtype)), tuple(shape)))

    @property
    def array(self) -> np.ndarray | None:
        return self.data.array

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ArrayBlob:
        with parser.in_angle_brackets():
            pos = parser.pos
            element_type = parser.parse_type()
            try:
                dtype_name = str(dtype_of(element_type))
            except UnsupportedElementType as e:
                parser.raise_error(str(e), pos)
            parser.parse_punctuation(",")
            shape = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_negative=False)
            )
            parser.parse_punctuation(",")
            payload_pos = parser.pos
            payload = read_payload(parser)
        try:
            array = payload_array(payload, dtype_name, shape)
        except ValueError as e:
            parser.raise_error(str(e), payload_pos)
        if array is None:
            return ArrayBlob(None, dtype_name, tuple(shape))
        return ArrayBlob.of(array, dtype_name)

    def print_parameter(self, printer: Printer) -> None:
        blob = self.data
        with printer.in_angle_brackets():
            printer.print_attribute(element_type_of(blob.dtype_name))
            printer.print_string(f", [{', '.join(map(str, blob.shape))}], ")
            printer.print_string(format_payload(blob.array))
