"""Exceptions raised inside a kernel, told in plain words for a user-facing message.

A kernel runs numpy; numpy's messages name numpy's view of the failure (``index 8 is out
of bounds for axis 0 with size 2``) and Python's exception classes are not words a user
should have to read. :func:`plain_words` rewords the failures that bad input values cause
(an index out of range, shapes that do not broadcast, a reshape that does not fit, a
division by zero, memory) and keeps any other message as it is; :func:`is_internal` tells
those from failures that can only be a bug of tilegraph (a kernel reaching a type or
attribute it does not handle, a failed assertion).
"""

from __future__ import annotations

import re

_OUT_OF_BOUNDS = re.compile(
    r"index (?P<index>-?\d+) is out of bounds for (?:axis (?P<axis>\d+) with )?size (?P<size>\d+)"
)
_BROADCAST = re.compile(r"operands could not be broadcast together")
_TUPLE = re.compile(r"\(([\d, ]*)\)")
_RESHAPE = re.compile(r"cannot reshape array of size (?P<size>\d+) into shape \((?P<shape>[^)]*)\)")

# failures that input values (or shapes) can cause in a correct kernel
_DATA_ERRORS: tuple[type[BaseException], ...] = (
    IndexError,
    ValueError,
    ArithmeticError,
    MemoryError,
    NotImplementedError,
)


def _dims(text: str) -> str:
    """A numpy shape tuple's inside (``3, 4,``) as a list (``[3, 4]``)."""
    return "[" + ", ".join(p.strip() for p in text.split(",") if p.strip()) + "]"


def plain_words(e: BaseException) -> str:
    """``e``'s message in plain words, without its class name (for the known numpy
    failures a rewording with what to check; otherwise the message, or the class's own
    description when the message is empty)."""
    text = str(e).strip()
    if isinstance(e, KeyError) and e.args:
        return f"no entry for {e.args[0]!r}"
    if isinstance(e, IndexError) and (m := _OUT_OF_BOUNDS.search(text)):
        size = int(m["size"])
        axis = f"axis {m['axis']} of size {size}" if m["axis"] is not None else f"size {size}"
        return (
            f"index {m['index']} is out of range for {axis} (valid indices are {-size} to "
            f"{size - 1}): check the values of the inputs that reach it"
        )
    if isinstance(e, ValueError) and _BROADCAST.search(text):
        shapes = [_dims(t) for t in _TUPLE.findall(text.split("remapped")[0])]
        return f"shapes {' and '.join(shapes)} do not broadcast: check the input shapes"
    if isinstance(e, ValueError) and (m := _RESHAPE.search(text)):
        return (
            f"cannot reshape {m['size']} elements into shape {_dims(m['shape'])}: check the "
            "input shapes"
        )
    if isinstance(e, ZeroDivisionError):
        return "division by zero: check the values of the inputs that reach it"
    if isinstance(e, MemoryError):
        return f"out of memory ({text or 'no details'}): try smaller inputs"
    if text:
        return text
    doc = (type(e).__doc__ or "").strip().splitlines()
    return doc[0].rstrip(".").lower() if doc else "failed without a message"


def is_internal(e: BaseException) -> bool:
    """Whether ``e``, raised by a kernel or a pass, can only be a bug of tilegraph (not a
    consequence of the model or of input values)."""
    return not isinstance(e, _DATA_ERRORS)
