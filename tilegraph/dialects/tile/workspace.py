"""Typed buffers carved out of one GM workspace: ``tile.view``.

``plan-memory`` (:mod:`tilegraph.lowering.transforms.plan_memory`) gives every intermediate
tensor of the host sequence a byte offset in a single workspace, an ``i8`` GM buffer, and
turns its ``tile.alloc`` into a view at that offset::

    %workspace = tile.alloc : memref<8192xi8, "GM">
    %y = tile.view %workspace[4096] : memref<8192xi8, "GM"> to memref<1x4x6x6xf32, "GM">

A view is an address computation, not a copy: its numpy semantics
(:mod:`tilegraph.runtime.tile_interpreter.workspace`) is a view into the workspace array,
so the executors run a planned module on the planned memory, and a wrong plan gives wrong
numbers.

``tile.strided_view`` is the other address computation on GM: a kernel argument read or
written through strides (a matmul operand or result that a reshape / transpose chain
re-indexes, :mod:`tilegraph.lowering.analysis.operand_views`)::

    %q = tile.strided_view %x : memref<1x8x64xf32> to memref<1x4x8x16xf32, strided<[512,16,64,1]>>

The strides are the result type's layout (elements, from the layout's offset), so every
op on the view sees them: the DMA's GM runs
(:func:`~tilegraph.dialects.tile.base.contiguous_run` with
:func:`~tilegraph.dialects.tile.base.memref_strides`) are those of the view, not of a
row-major buffer of its shape.
``tile.reshape_view`` is the host's alias of a row-major GM buffer under another shape
(``alias-reshapes``, :mod:`tilegraph.lowering.transforms.alias_reshapes`: a kernel that only
reshapes an ND tensor runs no kernel, as GE runs no task for Reshape / Squeeze / Unsqueeze /
Flatten)::

    %s = tile.reshape_view %r : memref<3x16x8xf32, "GM"> to memref<3x128xf32, "GM">

Element ``i`` of the view (row-major) is element ``i`` of the source: the same bytes.
Byte sizes are those of the executors' containers (:func:`~tilegraph.dialects.tile.host.
numpy_dtype`: a GM bf16 element is held in a float32 container, 4 bytes).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    i8,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import (
    TileOp,
    memref_shape,
    memref_strides,
    module_preset,
    scope_of,
)
from tilegraph.dialects.tile.host import numpy_dtype


def container_bytes(memref: Attribute) -> int:
    """Bytes a buffer of this memref type occupies in the executors' containers."""
    return prod(memref_shape(memref)) * numpy_dtype(memref).itemsize


def is_workspace_type(memref: Attribute) -> bool:
    """A 1-D static ``i8`` buffer in GM: what views are carved out of."""
    return (
        isinstance(memref, MemRefType)
        and memref.element_type == i8
        and scope_of(memref) == "GM"
        and len(memref.get_shape()) == 1
        and memref.get_shape()[0] >= 0
    )


@irdl_op_definition
class ViewOp(TileOp):
    """``%y = tile.view %ws[offset] : memref<Nxi8, "GM"> to memref<..., "GM">``: a typed
    GM buffer at a byte offset of a workspace.

    Verified: the workspace is a 1-D ``i8`` GM buffer, the view a static GM memref, the
    offset a multiple of the preset's GM alignment, and the view inside the workspace.
    Pipe S, one cycle (an address computation on the scalar unit)."""

    name = "tile.view"
    PIPE: ClassVar[str] = "S"

    workspace = operand_def(MemRefType)
    offset = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    traits = traits_def(Pure())

    def __init__(self, workspace: SSAValue, offset: int, memref: MemRefType):
        super().__init__(
            operands=[workspace],
            result_types=[memref],
            properties={"offset": IntegerAttr(offset, 64)},
        )

    @property
    def byte_offset(self) -> int:
        return self.offset.value.data

    @property
    def byte_size(self) -> int:
        return container_bytes(self.result.type)

    def verify_(self) -> None:
        ws, view = self.workspace.type, self.result.type
        if not is_workspace_type(ws):
            raise VerifyException(
                f"'tile.view': the workspace must be a 1-D i8 buffer in GM, got {ws}"
            )
        assert isinstance(view, MemRefType) and isinstance(ws, MemRefType)
        if scope_of(view) != "GM":
            raise VerifyException(
                f"'tile.view': views are GM buffers, but the result is in {scope_of(view)}"
            )
        if any(d < 0 for d in view.get_shape()):
            raise VerifyException("'tile.view': views have static shapes")
        align = module_preset(self).alignment["GM"]
        offset, size, total = self.byte_offset, self.byte_size, ws.get_shape()[0]
        if offset < 0 or offset % align:
            raise VerifyException(
                f"'tile.view': offset {offset} is not a multiple of the GM alignment ({align} B)"
            )
        if offset + size > total:
            raise VerifyException(
                f"'tile.view': a {size} B view at offset {offset} ends at {offset + size}, "
                f"past the end of the {total} B workspace"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        offset = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation("]")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        workspace = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_keyword("to")
        memref = parser.parse_type()
        if not isinstance(memref, MemRefType):
            parser.raise_error(f"'tile.view' yields a memref, got {memref}")
        op = cls(workspace, offset, memref)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.workspace)
        printer.print_string(f"[{self.byte_offset}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.workspace.type)
        printer.print_string(" to ")
        printer.print_attribute(self.result.type)


def strided_memref(
    source: Attribute, shape: Sequence[int], strides: Sequence[int], offset: int = 0
) -> MemRefType:
    """A view type of ``source``'s element and scope: ``shape`` at element ``strides``,
    from element ``offset`` of the source."""
    assert isinstance(source, MemRefType)
    layout = StridedLayoutAttr(list(strides), offset)
    return MemRefType(source.element_type, list(shape), layout, source.memory_space)


class GmViewOp(TileOp):
    """A GM buffer ``src`` addressed as the result type (an address computation on the
    scalar unit, pipe S, one cycle): it moves, reads and writes nothing itself."""

    PIPE: ClassVar[str] = "S"

    src = operand_def(MemRefType)
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `to` type($result)"

    def __init__(self, src: SSAValue, memref: MemRefType):
        super().__init__(operands=[src], result_types=[memref])

    def written(self) -> SSAValue | None:
        return None

    def read(self) -> tuple[SSAValue, ...]:
        return ()

    def gm_types(self) -> tuple[MemRefType, MemRefType]:
        """(source, view) types, verified to be GM memrefs of one element type."""
        src, view = self.src.type, self.result.type
        assert isinstance(src, MemRefType) and isinstance(view, MemRefType)
        if scope_of(src) != "GM" or scope_of(view) != "GM":
            raise VerifyException(f"'{self.name}': views of GM buffers are GM buffers")
        if src.element_type != view.element_type:
            raise VerifyException(f"'{self.name}': the view keeps the element type")
        return src, view

    def row_major_types(self) -> tuple[MemRefType, MemRefType]:
        """:meth:`gm_types`, verified static and row-major (no layout) too: a host alias's
        source and view."""
        src, view = self.gm_types()
        for t in (src, view):
            if not isinstance(t.layout, NoneAttr) or any(d < 0 for d in t.get_shape()):
                raise VerifyException(
                    f"'{self.name}': the source and the view are static and row-major"
                )
        return src, view


@irdl_op_definition
class StridedViewOp(GmViewOp):
    """``%v = tile.strided_view %src : memref<..> to memref<.., strided<[..]>>``: the GM
    buffer ``src`` addressed as the result type's shape at its strides, from the layout's
    element offset (a split's later outputs: ``strided<[..], offset: N>``).

    Verified: both in GM, the same element type, ``src`` row-major and static, the view's
    offset and strides non-negative and its last element inside ``src``. Pipe S, one cycle (an
    address computation on the scalar unit); it moves nothing."""

    name = "tile.strided_view"

    def verify_(self) -> None:
        src, view = self.gm_types()
        if not isinstance(src.layout, NoneAttr) or any(d < 0 for d in src.get_shape()):
            raise VerifyException("'tile.strided_view': the source must be static and row-major")
        if not isinstance(view.layout, StridedLayoutAttr):
            raise VerifyException("'tile.strided_view': the view needs a strided<[...]> layout")
        offset = view.layout.get_offset()
        if not isinstance(offset, int) or offset < 0:
            raise VerifyException("'tile.strided_view': the view needs a static offset >= 0")
        shape, strides = memref_shape(view), memref_strides(view)
        if any(d < 0 for d in shape) or any(s < 0 for s in strides):
            raise VerifyException("'tile.strided_view': static shape, non-negative strides")
        last = offset + sum((d - 1) * s for d, s in zip(shape, strides, strict=True))
        if prod(shape) and last >= prod(memref_shape(src)):
            raise VerifyException(
                f"'tile.strided_view': element {last} of the view is past the end of the "
                f"{prod(memref_shape(src))}-element source"
            )


@irdl_op_definition
class ReshapeViewOp(GmViewOp):
    """``%v = tile.reshape_view %src : memref<AxBxf32, "GM"> to memref<Cxf32, "GM">``: the
    row-major GM buffer ``src`` read as another row-major shape of as many elements (a
    host-level alias: no copy, no task).

    Verified: both in GM, plain (no layout: row-major), static, the same element type and
    element count. Pipe S, one cycle (an address computation on the scalar unit); it moves
    nothing, and an access through it is an access of ``src``
    (:func:`reshape_view_base`)."""

    name = "tile.reshape_view"

    def verify_(self) -> None:
        src, view = self.row_major_types()
        if prod(memref_shape(src)) != prod(memref_shape(view)):
            raise VerifyException(
                f"'tile.reshape_view': {prod(memref_shape(view))} elements viewed of a "
                f"{prod(memref_shape(src))}-element source"
            )


@irdl_op_definition
class SliceViewOp(GmViewOp):
    """``%v = tile.slice_view %src[offset] : memref<1x3x8x8x16xf32, "GM"> to
    memref<1x1x8x8x16xf32, "GM">``: the row-major run of ``src`` from element ``offset``,
    read as the result's row-major shape (a host-level placement: a producer writes its
    result into a concat's output through it, ``place-concat``,
    :mod:`tilegraph.lowering.transforms.place_concat`).

    The result type is plain (row-major, no layout), so a kernel whose argument has that
    type reads or writes the view unchanged: the region must be contiguous in ``src``.
    Verified: both in GM, plain, static, the same element type, the run inside ``src``.
    Pipe S, one cycle; it moves nothing, and an access through it is an access of part of
    ``src`` (:func:`alias_base`)."""

    name = "tile.slice_view"

    offset = prop_def(IntegerAttr[I64])
    assembly_format = "$src `[` $offset `]` attr-dict `:` type($src) `to` type($result)"

    def __init__(self, src: SSAValue, offset: int, memref: MemRefType):
        super().__init__(src, memref)
        self.properties["offset"] = IntegerAttr(offset, 64)

    @property
    def element_offset(self) -> int:
        return self.offset.value.data

    def verify_(self) -> None:
        src, view = self.row_major_types()
        start, size, total = self.element_offset, prod(view.get_shape()), prod(src.get_shape())
        if start < 0 or start + size > total:
            raise VerifyException(
                f"'tile.slice_view': elements [{start}, {start + size}) of a {total}-element source"
            )


def alias_base(value: SSAValue) -> SSAValue:
    """The buffer a chain of host aliases (``tile.reshape_view``, ``tile.slice_view``) is
    part of: an access through the chain touches that buffer's bytes."""
    while isinstance(value.owner, ReshapeViewOp | SliceViewOp):
        value = value.owner.src
    return value


def reshape_view_base(value: SSAValue) -> SSAValue:
    """The buffer a chain of ``tile.reshape_view`` aliases (the value itself when it is no
    such view): the buffer whose bytes an access through the view touches."""
    while isinstance(value.owner, ReshapeViewOp):
        value = value.owner.src
    return value


def view_offset(value: SSAValue | Attribute) -> int:
    """Elements between the start of the GM buffer a view addresses and the view's first
    element (0 for a plain buffer)."""
    t = value.type if isinstance(value, SSAValue) else value
    if isinstance(t, MemRefType) and isinstance(t.layout, StridedLayoutAttr):
        offset = t.layout.get_offset()
        return offset if isinstance(offset, int) else 0
    return 0


def gm_base(value: SSAValue) -> SSAValue:
    """The GM buffer a strided view addresses (the value itself when it is no view): a
    write through the view is a write of that buffer."""
    while isinstance(value.owner, StridedViewOp):
        value = value.owner.src
    return value


WORKSPACE_OPS = (ViewOp, StridedViewOp, ReshapeViewOp, SliceViewOp)
