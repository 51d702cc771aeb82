"""Element types at the interface: arrays go in and come out in the declared element type.

Inside, tilegraph holds a type's values in :attr:`DType.numpy <tilegraph.formats.DType.numpy>`:
bfloat16 in float32 and int4 in int8 (exact containers: every value of the narrow type is
one of the wider one), every other type in its own numpy or ``ml_dtypes`` type. At the
interface arrays are of :attr:`DType.exact_numpy <tilegraph.formats.DType.exact_numpy>`, the
declared ONNX element type itself (``ml_dtypes.bfloat16``, ``ml_dtypes.int4``,
``ml_dtypes.float8_e4m3fn``, ...), as ``onnx.numpy_helper.to_array`` gives them.

Both executors (:func:`~tilegraph.runtime.reference.run_reference` and
:func:`~tilegraph.runtime.tiles.run_tiles`) convert with these functions:

* :func:`accepts` / :func:`held_input`: an input of the declared type, converted exactly to
  its container. A plain void array of the same item size is read as the raw bytes of an
  ``ml_dtypes`` type (``np.save`` of an ``ml_dtypes`` array writes ``|V2``/``|V1``, which
  ``np.load`` gives back as such); no other type is accepted (no silent narrowing);
* :func:`interface_value`: a result in origin layout and in the declared type
  (:func:`~tilegraph.dialects.element_conversion.exact_array`). The container's values are
  the type's values, so this is exact, NaN payloads included; a container value that is not
  one (an executor that did not round) is rounded to nearest even as ``ml_dtypes`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import Attribute

from tilegraph.dialects.element_conversion import exact_array
from tilegraph.dialects.graph.value_types import OptionalType, SequenceType
from tilegraph.dialects.layout_storage import origin_array
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType, is_ml_dtypes


def _is_raw_bytes(array_dtype: np.dtype[Any], dtype: DType) -> bool:
    """A plain void dtype that can carry ``dtype``'s bytes (an ``ml_dtypes`` type only)."""
    exact = dtype.exact_numpy
    return (
        array_dtype.type is np.void
        and array_dtype.fields is None
        and array_dtype.subdtype is None
        and array_dtype.itemsize == exact.itemsize
        and is_ml_dtypes(exact)
    )


def accepts(array_dtype: np.dtype[Any], dtype: DType) -> bool:
    """Whether an input array of ``array_dtype`` can feed a tensor of element type ``dtype``:
    the declared type itself, or raw bytes of it (see the module docstring)."""
    return array_dtype == dtype.exact_numpy or _is_raw_bytes(array_dtype, dtype)


def held_input(array: np.ndarray, dtype: DType) -> np.ndarray:
    """``array`` (accepted by :func:`accepts`) in ``dtype``'s container: exact."""
    if _is_raw_bytes(array.dtype, dtype):
        array = array.view(dtype.exact_numpy)
    return array.astype(dtype.numpy, copy=False)


def expected_type(dtype: DType) -> str:
    """``dtype`` named for a message: its numpy name and its ONNX name,
    e.g. ``bfloat16 (ONNX BFLOAT16)``."""
    from onnx import TensorProto, helper

    code = helper.np_dtype_to_tensor_dtype(dtype.exact_numpy)
    return f"{dtype.exact_numpy.name} (ONNX {TensorProto.DataType.Name(code)})"


def interface_value(value: Any, t: Attribute) -> Any:
    """A result as the executor holds it (storage layout, container type) as the user gets
    it: origin layout, the declared element type. Sequences are lists of tensors, optionals
    a value or None; a value of another type is returned as it is."""
    if isinstance(t, TensorType):
        return exact_array(origin_array(value, t), t.dtype)
    if isinstance(t, SequenceType) and isinstance(value, list):
        return [exact_array(v, t.dtype) for v in value]
    if isinstance(t, OptionalType) and value is not None:
        return interface_value(value, t.element)
    return value
