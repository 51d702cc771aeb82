"""The host side of the tile level and the kernel boundary.

A lowered module has one host function (the model's entry) that allocates GM buffers and
launches kernels, and one ``func.func`` per kernel, marked ``tile.kernel = "cube"``,
``"vector"`` or ``"host"`` (an op with no tile lowering, run by its reference kernel: GE's
AI CPU)::

    func.func @main(%x: memref<1x1x8x8x16xf32, "GM">) -> memref<...> {
      %w = tile.constant <f32, [9, 1, 16, 16], __elided__> : memref<9x1x16x16xf32, "GM">
      %y = tile.alloc : memref<1x1x8x8x16xf32, "GM">
      tile.launch @fused_conv2d_relu_0(%x, %w, %y) : memref<...>, memref<...>, memref<...>
      func.return %y : memref<...>
    }

Before ``tile-kernels`` a kernel body states what it computes with graph ops between
``tile.read`` (GM buffer -> tensor value) and ``tile.write`` (tensor value -> GM buffer);
``tile-kernels`` replaces such a body with loops of scoped tile ops.
"""

from __future__ import annotations

from math import prod
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, MemRefType, SymbolRefAttr, bf16, i64
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.element_types import dtype_of, numpy_dtype_of
from tilegraph.dialects.graph.dense import DenseAttr
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile.base import (
    SCOPES,
    TileOp,
    buffer_bytes,
    memref_shape,
    module_preset,
    scope_of,
)


def numpy_dtype(memref: Attribute) -> np.dtype:
    """The numpy dtype of a buffer's elements. GM holds the graph level's containers (bf16 in
    float32); an on-chip bf16 buffer holds real bfloat16, so that data moved into it is
    rounded as the hardware rounds it."""
    assert isinstance(memref, MemRefType)
    if memref.element_type == bf16 and scope_of(memref) != "GM":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return numpy_dtype_of(memref.element_type)


@irdl_op_definition
class AllocOp(TileOp):
    """``%b = tile.alloc : memref<..., "UB">``: a buffer in a scope.

    The verifier checks that the buffer fits its scope in the module's preset
    (``tilegraph.target``); the address is assigned later by memory planning."""

    name = "tile.alloc"
    result = result_def(MemRefType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, memref: MemRefType):
        super().__init__(result_types=[memref])

    def verify_(self) -> None:
        t = self.result.type
        assert isinstance(t, MemRefType)
        if any(d < 0 for d in t.get_shape()):
            raise VerifyException("'tile.alloc': buffers have static shapes")
        scope = scope_of(t)
        if scope not in SCOPES:
            raise VerifyException(
                f"'tile.alloc': unknown memory scope {scope!r}; scopes are {', '.join(SCOPES)}"
            )
        if scope == "GM":
            return
        hw = module_preset(self)
        size = buffer_bytes(t)
        if size > hw.capacity(scope):
            raise VerifyException(
                f"'tile.alloc': a {list(t.get_shape())} {t.element_type} buffer needs {size} B, "
                f"but {scope} holds {hw.capacity(scope)} B on {hw.name}"
            )


@irdl_op_definition
class ConstantOp(TileOp):
    """``%w = tile.constant <f32, [shape], data> : memref<..., "GM">``: weights, in storage
    layout."""

    name = "tile.constant"
    value = prop_def(DenseAttr)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: DenseAttr, memref: MemRefType):
        super().__init__(result_types=[memref], properties={"value": value})

    def verify_(self) -> None:
        blob = self.value.data
        element = self.result.type.element_type  # type: ignore[union-attr]
        if blob.dtype_name != str(dtype_of(element)):
            raise VerifyException(
                f"'tile.constant': {blob.dtype_name} data for a buffer of {element}"
            )
        if tuple(blob.shape) != memref_shape(self.result.type):
            raise VerifyException(
                f"'tile.constant': data of shape {list(blob.shape)} for a "
                f"{list(memref_shape(self.result.type))} buffer"
            )


@irdl_op_definition
class LaunchOp(TileOp):
    """``tile.launch @kernel(%a, %b, %out) : memref<...>, ...``: run a kernel on the device.

    Arguments are GM buffers: the kernel's inputs, then its outputs (destination style).
    ``blocks = n`` (default 1) runs ``n`` instances of the kernel, one per core
    (:mod:`tilegraph.dialects.tile.cores`).

    A *mix launch* (a decoupled preset's cube + vector kernel) names its AIV function too:
    ``tile.launch @k_mix_aic(%a, %out, %ws) {aiv = @k_mix_aiv, blocks = 4, aiv_blocks = 8}``
    runs ``blocks = n`` AIC instances of ``callee`` and ``aiv_blocks = r * n`` AIV instances
    of ``aiv`` over the same arguments (the last one the GM workspace between them), ordered
    by cross-core flags (:mod:`tilegraph.dialects.tile.cross_core`). Core group ``g`` is AIC
    instance ``g`` and AIV instances ``g * r .. g * r + r - 1``: AIV instance ``v`` is
    sub-block ``v % r`` (``tile.sub_block_idx``) of group ``v // r``, and on both parts
    ``tile.block_idx`` is the group index and ``tile.block_num`` is ``n`` (Ascend C's
    ``GetBlockIdx() / GetTaskRation()`` on an AIV; 910B: r = 2). ``aiv_blocks`` defaults
    to ``blocks`` and must be a multiple of it."""

    name = "tile.launch"
    callee = prop_def(SymbolRefAttr)
    args = var_operand_def(MemRefType)
    blocks = opt_prop_def(IntegerAttr)
    aiv = opt_prop_def(SymbolRefAttr)
    aiv_blocks = opt_prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$callee `(` $args `)` attr-dict `:` type($args)"

    def __init__(self, callee: str, args, blocks: int = 1):
        properties: dict[str, Attribute] = {"callee": SymbolRefAttr(callee)}
        if blocks != 1:
            properties["blocks"] = IntegerAttr(blocks, i64)
        super().__init__(operands=[args], properties=properties)

    @property
    def block_count(self) -> int:
        return 1 if self.blocks is None else self.blocks.value.data

    @property
    def is_mix(self) -> bool:
        """A mix launch: an AIC function (``callee``) and an AIV function (``aiv``)."""
        return self.aiv is not None

    @property
    def aiv_callee(self) -> str | None:
        """The AIV function of a mix launch (None for a plain launch)."""
        return None if self.aiv is None else self.aiv.string_value()

    @property
    def aiv_block_count(self) -> int:
        """AIV instances of a mix launch (as many as AIC ones unless given)."""
        return self.block_count if self.aiv_blocks is None else self.aiv_blocks.value.data

    def callees(self) -> tuple[str, ...]:
        """The functions this launch runs: the kernel, or a mix launch's AIC and AIV parts."""
        aiv = self.aiv_callee
        return (self.callee.string_value(),) if aiv is None else (self.callee.string_value(), aiv)

    def verify_(self) -> None:
        if self.block_count < 1:
            raise VerifyException(
                f"'tile.launch': blocks must be at least 1, got {self.block_count}"
            )
        if self.aiv_blocks is not None and self.aiv is None:
            raise VerifyException("'tile.launch': aiv_blocks is given, but no aiv function")
        if self.is_mix and self.aiv_block_count < 1:
            raise VerifyException(
                f"'tile.launch': aiv_blocks must be at least 1, got {self.aiv_block_count}"
            )
        if self.is_mix and self.aiv_block_count % self.block_count:
            raise VerifyException(
                f"'tile.launch': aiv_blocks ({self.aiv_block_count}) must be a multiple of "
                f"blocks ({self.block_count}): r AIVs per core group"
            )
        for i, arg in enumerate(self.args):
            if scope_of(arg) != "GM":
                raise VerifyException(
                    f"'tile.launch': argument #{i} is in {scope_of(arg)}; kernels take GM buffers"
                )


@irdl_op_definition
class ReadOp(TileOp):
    """``%t = tile.read %buf : memref<...> -> !layout.tensor<...>``: a GM buffer as the
    tensor value graph ops compute on (its storage shape is the buffer's shape)."""

    name = "tile.read"
    buffer = operand_def(MemRefType)
    result = result_def(TensorType)
    traits = traits_def(MemoryReadEffect())
    assembly_format = "$buffer attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer, tensor: TensorType):
        super().__init__(operands=[buffer], result_types=[tensor])

    def verify_(self) -> None:
        _check_views(self, self.buffer.type, self.result.type)


@irdl_op_definition
class WriteOp(TileOp):
    """``tile.write %t to %buf : !layout.tensor<...> to memref<...>``: store a tensor value."""

    name = "tile.write"
    value = operand_def(TensorType)
    buffer = operand_def(MemRefType)
    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$value `to` $buffer attr-dict `:` type($value) `to` type($buffer)"

    def __init__(self, value, buffer):
        super().__init__(operands=[value, buffer])

    def verify_(self) -> None:
        _check_views(self, self.buffer.type, self.value.type)


def _check_views(op: TileOp, memref: Attribute, tensor: Attribute) -> None:
    assert isinstance(memref, MemRefType) and isinstance(tensor, TensorType)
    storage = tuple(tensor.storage_shape)
    if storage != memref_shape(memref) or memref.element_type != tensor.element_type:
        raise VerifyException(
            f"'{op.name}': buffer {memref} does not hold tensor {tensor} "
            f"(storage shape {list(storage)})"
        )


def tensor_buffer_type(t: TensorType, scope: str = "GM") -> MemRefType:
    """The GM buffer that holds a tensor: its storage shape and element type."""
    from tilegraph.dialects.tile.base import scoped_memref

    shape = list(t.storage_shape)
    if not all(isinstance(d, int) and d >= 0 for d in shape):
        raise ValueError(f"tile lowering needs static shapes, got {t}")
    return scoped_memref([int(d) for d in shape], t.element_type, scope)


def buffer_elements(t: Any) -> int:
    return prod(memref_shape(t))


HOST_OPS = (AllocOp, ConstantOp, LaunchOp, ReadOp, WriteOp)
