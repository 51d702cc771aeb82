"""Vector ops that reduce or move data within a tile: ``tile.vreduce``, ``tile.vpool``
(windowed max / average), ``tile.vtranspose``, ``tile.vstride`` (a strided, reversed or
broadcast gather: the element steps a DMA cannot take) and ``tile.vpick`` (a gather by a
compile-time index table per dim) (pipe V, on UB; see :mod:`.vector`).
Their numpy semantics are in :mod:`tilegraph.runtime.tile_interpreter.vector_layout`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    i64,
)
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import memref_shape
from tilegraph.dialects.tile.vector import TRAITS, VectorOp

REDUCTIONS = ("sum", "max", "min", "prod")


@irdl_op_definition
class ReduceOp(VectorOp):
    """``tile.vreduce %src to %dst {kind = "sum", axes = [2, 3]}``: reduce over ``axes``;
    ``dst`` keeps them as dims of size 1, or drops them (its rank says which)."""

    name = "tile.vreduce"
    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    kind = prop_def(StringAttr)
    axes = prop_def(DenseArrayBase)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"

    def reduced_axes(self) -> tuple[int, ...]:
        return tuple(int(a) for a in cast(Any, self.axes).get_values())

    def verify_(self) -> None:
        super().verify_()
        if self.kind.data not in REDUCTIONS:
            raise VerifyException(f"'{self.name}': kind must be one of {list(REDUCTIONS)}")
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        axes = self.reduced_axes()
        if len(set(axes)) != len(axes) or any(not 0 <= a < len(src) for a in axes):
            raise VerifyException(
                f"'{self.name}': axes {list(axes)} must be distinct dims of a rank-{len(src)} "
                "buffer"
            )
        kept = tuple(1 if i in axes else d for i, d in enumerate(src))
        dropped = tuple(d for i, d in enumerate(src) if i not in axes)
        if dst not in (kept, dropped):
            raise VerifyException(
                f"'{self.name}': reducing {list(src)} over {list(axes)} gives {list(kept)} "
                f"or {list(dropped)}, not {list(dst)}"
            )


POOL_KINDS = ("max", "avg", "avg_include_pad")


@irdl_op_definition
class PoolOp(VectorOp):
    """``tile.vpool %src[%row0, %col0?] to %dst {kind, kernel_shape, strides, dilations,
    pads, height, width}``: windowed max or average over dims 2 and 3 (H, W) of a UB tile.

    ``src`` holds the padded input window of ``dst``'s output pixels (row 0 / column 0 of
    ``src`` is the padded row / column of output row 0 / column 0); output ``[r, c]`` combines
    ``src[r·sh + i·dh, c·sw + j·dw]`` over the kernel. On the vector unit this is kh·kw
    strided ``vmax``/``vadd`` repeats. ``avg`` divides by the taps inside the image — output
    pixel ``(row0 + r, col0 + c)`` (``col0`` 0 when absent: a tile of whole rows) of an image
    of ``height`` x ``width`` padded by ``pads`` (top, left, bottom, right) — and
    ``avg_include_pad`` by the taps inside the padded image (never the extra end positions
    of ceil mode)."""

    name = "tile.vpool"
    src = operand_def(MemRefType)
    row0 = operand_def(IndexType)
    col0 = opt_operand_def(IndexType)
    dst = operand_def(MemRefType)
    kind = prop_def(StringAttr)
    kernel_shape = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)
    dilations = prop_def(DenseArrayBase)
    pads = prop_def(DenseArrayBase)
    height = prop_def(IntegerAttr)
    width = prop_def(IntegerAttr)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = (
        "$src `[` $row0 (`,` $col0^)? `]` `to` $dst attr-dict `:` type($src) `to` type($dst)"
    )

    def __init__(self, src, row0, dst, *, kind: str, kernel_shape, strides, dilations, pads,
                 height: int, width: int, col0=None):  # fmt: skip
        def ints(values) -> DenseArrayBase:
            return DenseArrayBase.from_list(i64, [int(v) for v in values])

        super().__init__(
            operands=[src, row0, [] if col0 is None else [col0], dst],
            properties={
                "kind": StringAttr(kind),
                "kernel_shape": ints(kernel_shape),
                "strides": ints(strides),
                "dilations": ints(dilations),
                "pads": ints(pads),
                "height": IntegerAttr(height, i64),
                "width": IntegerAttr(width, i64),
            },
        )

    def verify_(self) -> None:
        super().verify_()
        if self.kind.data not in POOL_KINDS:
            raise VerifyException(f"'{self.name}': kind must be one of {list(POOL_KINDS)}")
        if len(memref_shape(self.src)) < 4 or len(memref_shape(self.dst)) != len(
            memref_shape(self.src)
        ):
            raise VerifyException(f"'{self.name}': source and result are [N, C, H, W, ...] tiles")


class RearrangeOp(VectorOp):
    """Base of the ops ``%src to %dst {...}`` that move a tile's elements to other places
    (the source does not broadcast to the destination: the op's property maps one to the
    other)."""

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    irdl_options = (ParsePropInAttrDict(),)
    traits = TRAITS
    assembly_format = "$src `to` $dst attr-dict `:` type($src) `to` type($dst)"


@irdl_op_definition
class TransposeOp(RearrangeOp):
    """``tile.vtranspose %src to %dst {perm = [1, 0]}``."""

    name = "tile.vtranspose"
    perm = prop_def(DenseArrayBase)

    def verify_(self) -> None:
        super().verify_()
        perm = tuple(int(p) for p in cast(Any, self.perm).get_values())
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        if sorted(perm) != list(range(len(src))) or tuple(src[p] for p in perm) != dst:
            raise VerifyException(
                f"'{self.name}': perm {list(perm)} does not map {list(src)} to {list(dst)}"
            )


@irdl_op_definition
class StrideOp(RearrangeOp):
    """``tile.vstride %src to %dst {steps = [1, -1, 2, 0]}``: per dim d,
    ``dst[i] = src[base_d + i * steps[d]]`` with ``base_d`` 0 for a step >= 0 and
    ``src_d - 1`` for a negative one (the window is read from its end).

    What a slice with steps other than 1, a reflected border (step -1) or an edge / expand
    broadcast (step 0) needs after the DMA brought the covering window into UB: the MTE
    moves runs of 32-byte blocks with block strides, so it cannot skip or reverse
    elements; the vector unit gathers them (Ascend C ``Gather`` with an offset table)."""

    name = "tile.vstride"
    steps = prop_def(DenseArrayBase)

    def __init__(self, src: Any, dst: Any, steps: Sequence[int]):
        super().__init__(
            operands=[src, dst],
            properties={"steps": DenseArrayBase.from_list(i64, [int(s) for s in steps])},
        )

    def step_values(self) -> tuple[int, ...]:
        return tuple(int(s) for s in cast(Any, self.steps).get_values())

    def verify_(self) -> None:
        super().verify_()
        steps = self.step_values()
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        if len(steps) != len(src) or len(src) != len(dst):
            raise VerifyException(
                f"'{self.name}': source {list(src)}, result {list(dst)} and steps "
                f"{list(steps)} must have one entry per dim"
            )
        for d, (s, n, m) in enumerate(zip(steps, src, dst, strict=True)):
            if m > 0 and (m - 1) * abs(s) >= n:
                raise VerifyException(
                    f"'{self.name}': dim {d}: {m} elements in steps of {s} read past the "
                    f"source's {n}"
                )


@irdl_op_definition
class PickOp(RearrangeOp):
    """``tile.vpick %src to %dst {indices = [0, 0, 1, 1, 0, 2, 4]}``: per dim d a table
    ``t_d`` of ``dst_d`` source positions, the tables concatenated in dim order;
    ``dst[i0, i1, ...] = src[t_0[i0], t_1[i1], ...]``.

    The gather a table of positions needs where no constant step describes it (a nearest
    resize's source rows and columns: ``floor(o / 1.5)``): Ascend C ``Gather`` with an
    offset table the compiler fills. Costed as a vector op whose repeats also read the
    4-byte offset of every element."""

    name = "tile.vpick"
    indices = prop_def(DenseArrayBase)

    def __init__(self, src: Any, dst: Any, tables: Sequence[Sequence[int]]):
        flat = [int(i) for table in tables for i in table]
        super().__init__(
            operands=[src, dst], properties={"indices": DenseArrayBase.from_list(i64, flat)}
        )

    def tables(self) -> list[tuple[int, ...]]:
        """The index table of each dim of ``dst``."""
        flat = [int(i) for i in cast(Any, self.indices).get_values()]
        out, start = [], 0
        for m in memref_shape(self.dst):
            out.append(tuple(flat[start : start + m]))
            start += m
        return out

    def verify_(self) -> None:
        super().verify_()
        src, dst = memref_shape(self.src), memref_shape(self.dst)
        count = len(cast(Any, self.indices).get_values())
        if len(src) != len(dst) or count != sum(dst):
            raise VerifyException(
                f"'{self.name}': source {list(src)} and result {list(dst)} need the same rank "
                f"and one index per result element of each dim ({sum(dst)}), got {count}"
            )
        for d, (table, n) in enumerate(zip(self.tables(), src, strict=True)):
            if any(not 0 <= i < n for i in table):
                raise VerifyException(
                    f"'{self.name}': dim {d}: indices must lie in [0, {n}), got {list(table)}"
                )


LAYOUT_VECTOR_OPS = (ReduceOp, PoolOp, TransposeOp, StrideOp, PickOp)
