"""The ``layout`` dialect's attributes: the format enum attribute and the tensor type.

``!layout.tensor`` carries both views of a tensor, as GE's tensor descriptor does:

* the **origin** view: origin shape (int, ``?`` or symbolic dims), element type, origin format;
* the **storage** view: storage format plus its parameters (FRACTAL_Z groups, C0, the
  reshapeType of a low-rank operand). The storage shape is *derived* from the origin view and
  the storage format by :func:`tilegraph.formats.storage_shape`; it is never stored.

Textual form (the storage shape in brackets is printed for information and checked when
parsed; it may be omitted in hand-written IR)::

    !layout.tensor<1x3x224x224xf32>                                 ND, storage = origin
    !layout.tensor<1x3x224x224xf32, NCHW>                           origin NCHW, storage NCHW
    !layout.tensor<1x3x224x224xf16, NCHW -> NC1HWC0 [1, 1, 224, 224, 16]>
    !layout.tensor<64xf16, NCHW -> NC1HWC0{reshape_type = "C"} [1, 4, 1, 1, 16]>
    !layout.tensor<32x1x3x3xf16, NCHW -> FRACTAL_Z{groups = 32} [...]>
    !layout.tensor<[s0, 3, 224, 224], f16, NCHW -> NC1HWC0 [s0, 1, 224, 224, 16]>

C0 is resolved when the type is built (it depends on the platform) and printed as
``c0 = N`` only where it differs from the ascend910b table, so a type means the same thing
whichever platform is compiled for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import prod

from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, IntAttr, StringAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.element_types import UnsupportedElementType, dtype_of
from tilegraph.formats import (
    DEFAULT_PLATFORM,
    DType,
    Format,
    FormatError,
    c0_for,
    parse_format,
    storage_shape,
)
from tilegraph.formats.dims import (
    UNKNOWN,
    Dim,
    dim_from_text,
    dim_to_text,
    is_symbolic,
    normalize_dim,
)


@irdl_attr_definition
class FormatAttr(EnumAttribute[Format], SpacedOpaqueSyntaxAttribute):  # pyright: ignore[reportInvalidTypeArguments]
    # tilegraph.formats stays free of xDSL, so Format is an enum.StrEnum, which xDSL accepts
    """A data format as an attribute: ``#layout<format NC1HWC0>``."""

    name = "layout.format"


@dataclass(frozen=True)
class ShapeDesc:
    """Both shapes of a tensor, as GE's ``GetOriginShape()`` / ``GetShape()`` pair."""

    origin: tuple[Dim, ...]
    storage: tuple[Dim, ...]


@dataclass(frozen=True)
class FormatDesc:
    """Both formats of a tensor, as GE's ``GetOriginFormat()`` / ``GetFormat()`` pair."""

    origin: Format
    storage: Format


def _dim_attr(d: Dim) -> Attribute:
    d = normalize_dim(d)
    if isinstance(d, int):
        return IntAttr(d)
    return StringAttr(dim_to_text(d))


def _dim_value(a: Attribute) -> Dim:
    if isinstance(a, IntAttr):
        return a.data
    assert isinstance(a, StringAttr)
    return dim_from_text(a.data)


def _uses_c0(fmt: Format) -> bool:
    return fmt.uses_c0


@lru_cache(maxsize=65536)
def _derive_storage_shape(t: TensorType) -> tuple[Dim, ...]:
    if t.storage_format == t.origin_format:
        return t.origin_shape
    shape = storage_shape(
        list(t.origin_shape),
        t.origin_format,
        t.storage_format,
        t.dtype,
        groups=t.groups.data,
        c0=t.c0.data or None,
        reshape_type=t.reshape_type.data or None,
    )
    return tuple(normalize_dim(d) for d in shape)


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """A tensor with an origin view and a storage view (see the module docstring)."""

    name = "layout.tensor"

    dims: ArrayAttr[IntAttr | StringAttr]
    """Origin shape: ``IntAttr`` (``-1`` = unknown) or ``StringAttr`` (a sympy expression)."""
    element_type: Attribute
    origin: FormatAttr
    storage: FormatAttr
    groups: IntAttr
    """FRACTAL_Z / FRACTAL_Z_3D groups; 1 elsewhere."""
    c0: IntAttr
    """Resolved C0 of a C0-blocked storage format; 0 for formats without C0."""
    reshape_type: StringAttr
    """Rank-expansion axes of a low-rank origin ("" = the default of formats.md)."""

    def __init__(
        self,
        shape: Sequence[Dim | None],
        element_type: Attribute,
        origin: Format | str = Format.ND,
        storage: Format | str | None = None,
        *,
        groups: int = 1,
        c0: int | None = None,
        reshape_type: str | None = None,
        platform: str = DEFAULT_PLATFORM,
    ):
        origin_fmt = parse_format(origin)
        storage_fmt = origin_fmt if storage is None else parse_format(storage)
        if c0 is None and _uses_c0(storage_fmt):
            c0 = c0_for(dtype_of(element_type), platform)
            if storage_fmt == Format.NC1HWC0_C04:
                c0 = 4
        super().__init__(
            ArrayAttr(_dim_attr(normalize_dim(d)) for d in shape),
            element_type,
            FormatAttr(origin_fmt),
            FormatAttr(storage_fmt),
            IntAttr(groups),
            IntAttr(c0 if (c0 and _uses_c0(storage_fmt)) else 0),
            StringAttr(reshape_type or ""),
        )

    # ---- GE-style accessors -------------------------------------------------------------
    @property
    def origin_shape(self) -> tuple[Dim, ...]:
        return tuple(_dim_value(d) for d in self.dims)

    @property
    def origin_format(self) -> Format:
        return self.origin.data

    @property
    def storage_format(self) -> Format:
        return self.storage.data

    @property
    def storage_shape(self) -> tuple[Dim, ...]:
        """The storage shape, derived from the origin view and the storage format."""
        return _derive_storage_shape(self)

    @property
    def stored_as_one_element(self) -> bool:
        """One element, stored as one (not padded to a fractal or a C0 block): a scalar
        program's value, whose vector tile is one element too."""
        return all(d == 1 for d in self.storage_shape)

    @property
    def shape(self) -> ShapeDesc:
        return ShapeDesc(self.origin_shape, self.storage_shape)

    @property
    def format(self) -> FormatDesc:
        return FormatDesc(self.origin_format, self.storage_format)

    @property
    def dtype(self) -> DType:
        return dtype_of(self.element_type)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, IntAttr) and d.data >= 0 for d in self.dims)

    @property
    def has_symbolic_dims(self) -> bool:
        return any(isinstance(d, StringAttr) for d in self.dims)

    def num_elements(self) -> int | None:
        """Origin element count, or None when a dim is not static."""
        return prod(d.data for d in self.dims) if self.is_static else None  # type: ignore[attr-defined]

    def storage_bytes(self) -> int | None:
        """Bytes of the storage view (padding included), or None when not static."""
        shape = self.storage_shape
        if not all(isinstance(d, int) and d >= 0 for d in shape):
            return None
        return (prod(shape) * self.dtype.bits + 7) // 8  # type: ignore[arg-type]

    def with_storage(
        self,
        storage: Format | str,
        *,
        groups: int = 1,
        c0: int | None = None,
        reshape_type: str | None = None,
        platform: str = DEFAULT_PLATFORM,
    ) -> TensorType:
        """The same origin view with another storage format."""
        return TensorType(
            self.origin_shape,
            self.element_type,
            self.origin_format,
            storage,
            groups=groups,
            c0=c0,
            reshape_type=reshape_type,
            platform=platform,
        )

    def with_origin_format(self, origin: Format | str) -> TensorType:
        """Relabel the origin format (storage follows when it equalled the origin)."""
        storage = origin if self.storage_format == self.origin_format else self.storage_format
        return TensorType(
            self.origin_shape,
            self.element_type,
            origin,
            storage,
            groups=self.groups.data,
            c0=self.c0.data or None,
            reshape_type=self.reshape_type.data or None,
        )

    def with_shape(self, shape: Sequence[Dim | None], element_type: Attribute | None = None):
        """Another origin shape (and element type), same formats."""
        return TensorType(
            shape,
            self.element_type if element_type is None else element_type,
            self.origin_format,
            self.storage_format,
            groups=self.groups.data,
            c0=self.c0.data or None,
            reshape_type=self.reshape_type.data or None,
        )

    def storage_params(self) -> dict[str, int | str]:
        """Storage parameters that differ from their defaults (printed in braces)."""
        params: dict[str, int | str] = {}
        if self.groups.data != 1:
            params["groups"] = self.groups.data
        if self.c0.data:
            try:
                default_c0 = c0_for(self.dtype, DEFAULT_PLATFORM)
            except FormatError:
                default_c0 = 0
            if self.storage_format == Format.NC1HWC0_C04:
                default_c0 = 4
            if self.c0.data != default_c0:
                params["c0"] = self.c0.data
        if self.reshape_type.data:
            params["reshape_type"] = self.reshape_type.data
        return params

    # ---- verification -------------------------------------------------------------------
    def verify(self) -> None:
        try:
            dtype_of(self.element_type)
        except UnsupportedElementType as e:
            raise VerifyException(str(e)) from e
        if self.groups.data < 1:
            raise VerifyException(f"groups must be >= 1, got {self.groups.data}")
        if self.c0.data < 0:
            raise VerifyException(f"c0 must be positive, got {self.c0.data}")
        for d in self.dims:
            if isinstance(d, IntAttr) and d.data < -1:
                raise VerifyException(f"invalid dimension {d.data}")
        axes = self.origin_format.axes
        if axes is None and not self.origin_format.is_origin:
            raise VerifyException(
                f"{self.origin_format} is a storage format and cannot be an origin format"
            )
        if axes is not None and self.rank > len(axes):
            raise VerifyException(
                f"origin format {self.origin_format} needs rank <= {len(axes)}, "
                f"got rank {self.rank}"
            )
        if self.storage_format != self.origin_format:
            try:
                _derive_storage_shape(self)
            except FormatError as e:
                raise VerifyException(f"invalid storage view: {e}") from e

    # ---- syntax -------------------------------------------------------------------------
    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = _parse_shape(parser)
            origin = storage = Format.ND
            params: dict[str, int | str] = {}
            printed_storage: list[Dim] | None = None
            if parser.parse_optional_punctuation(","):
                origin = storage = _parse_format(parser)
                if parser.parse_optional_punctuation("->"):
                    storage = _parse_format(parser)
                    if parser.parse_optional_punctuation("{"):
                        params = _parse_storage_params(parser)
                    if parser.parse_optional_punctuation("["):
                        printed_storage = _parse_dim_list_tail(parser)
            pos = parser.pos
        try:
            t = TensorType(
                dims,
                element_type,
                origin,
                storage,
                groups=int(params.get("groups", 1)),
                c0=int(params["c0"]) if "c0" in params else None,
                reshape_type=str(params["reshape_type"]) if "reshape_type" in params else None,
            )
            t.verify()
            derived = t.storage_shape
        except (VerifyException, FormatError, UnsupportedElementType) as e:
            parser.raise_error(str(e), pos)
        if printed_storage is not None:
            if len(printed_storage) != len(derived) or not all(
                _same_dim(a, b) for a, b in zip(printed_storage, derived, strict=False)
            ):
                parser.raise_error(
                    f"storage shape [{_dims_text(printed_storage)}] does not match the "
                    f"shape derived from {origin} -> {storage}: [{_dims_text(derived)}]",
                    pos,
                )
        return t.parameters

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            shape = self.origin_shape
            if self.has_symbolic_dims:
                printer.print_string(f"[{_dims_text(shape)}], ")
                printer.print_attribute(self.element_type)
            else:
                printer.print_dimension_list([DYNAMIC_INDEX if d == UNKNOWN else d for d in shape])  # type: ignore[misc]
                if shape:
                    printer.print_string("x")
                printer.print_attribute(self.element_type)
            if self.origin_format == Format.ND and self.storage_format == Format.ND:
                return
            printer.print_string(f", {self.origin_format}")
            if self.storage_format == self.origin_format:
                return
            printer.print_string(f" -> {self.storage_format}")
            params = self.storage_params()
            if params:
                body = ", ".join(
                    f'{k} = "{v}"' if isinstance(v, str) else f"{k} = {v}"
                    for k, v in params.items()
                )
                printer.print_string("{" + body + "}")
            printer.print_string(f" [{_dims_text(self.storage_shape)}]")


def _same_dim(a: Dim, b: Dim) -> bool:
    a, b = normalize_dim(a), normalize_dim(b)
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if is_symbolic(a) and is_symbolic(b):
        return bool((a - b).simplify() == 0)  # type: ignore[operator]
    return False


def _dims_text(dims: Sequence[Dim]) -> str:
    out = []
    for d in dims:
        text = dim_to_text(d)
        out.append(text if text == "?" or text.isidentifier() or text.isdigit() else f'"{text}"')
    return ", ".join(out)


def _parse_format(parser: AttrParser) -> Format:
    pos = parser.pos
    name = parser.parse_identifier(" format name")
    try:
        return parse_format(name)
    except FormatError as e:
        parser.raise_error(str(e), pos)


def _parse_dim(parser: AttrParser) -> Dim:
    if parser.parse_optional_punctuation("?"):
        return UNKNOWN
    value = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if value is not None:
        return value
    pos = parser.pos
    text = parser.parse_optional_str_literal()
    if text is None:
        text = parser.parse_identifier(" dimension (integer, '?', symbol or quoted expression)")
    try:
        return dim_from_text(text)
    except ValueError as e:
        parser.raise_error(str(e), pos)


def _parse_dim_list_tail(parser: AttrParser) -> list[Dim]:
    """Dims after an already consumed ``[`` up to and including ``]``."""
    dims: list[Dim] = []
    if parser.parse_optional_punctuation("]"):
        return dims
    dims.append(_parse_dim(parser))
    while parser.parse_optional_punctuation(","):
        dims.append(_parse_dim(parser))
    parser.parse_punctuation("]")
    return dims


def _parse_shape(parser: AttrParser) -> tuple[list[Dim], Attribute]:
    if parser.parse_optional_punctuation("["):
        dims = _parse_dim_list_tail(parser)
        parser.parse_punctuation(",")
        return dims, parser.parse_type()
    shape, element_type = parser.parse_ranked_shape()
    return [UNKNOWN if d == DYNAMIC_INDEX else d for d in shape], element_type


def _parse_storage_params(parser: AttrParser) -> dict[str, int | str]:
    """``key = value`` pairs after an already consumed ``{`` up to ``}``."""
    params: dict[str, int | str] = {}
    allowed = ("groups", "c0", "reshape_type")
    while True:
        pos = parser.pos
        key = parser.parse_identifier(" storage parameter")
        if key not in allowed:
            parser.raise_error(f"unknown storage parameter '{key}' (expected {allowed})", pos)
        parser.parse_punctuation("=")
        if key == "reshape_type":
            params[key] = parser.parse_str_literal()
        else:
            params[key] = parser.parse_integer(allow_boolean=False, allow_negative=False)
        if not parser.parse_optional_punctuation(","):
            break
    parser.parse_punctuation("}")
    return params
