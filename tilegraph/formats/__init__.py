"""tilegraph.formats — the format domain model, shared by passes, runtime and tests.

Plain Python + numpy + sympy (no xDSL). It implements ``docs/formats.md``:

* ``Format`` (origin formats ND/NCHW/NHWC/HWCN/CHWN/NCDHW/NDHWC/DHWCN and storage formats
  NC1HWC0, NC1HWC0_C04, C1HWNCoC0, FRACTAL_Z, FRACTAL_Z_C04, FRACTAL_NZ, NDC1HWC0,
  FRACTAL_Z_3D) with axis metadata; ``parse_format``.
* ``DType`` with bit widths and numpy containers; ``parse_dtype``.
* ``Platform`` profiles with the per-dtype C0 table (``PLATFORMS``, ``get_platform``,
  ``c0_for``); default platform "ascend910b".
* ``Dim`` and the rest of ``tilegraph.formats.dims`` — what a dimension is (``int >= 0``,
  ``UNKNOWN`` = -1, or a sympy expression over positive-integer shape symbols), its
  normalisation (``normalize_dim``, ``DimError``), predicates, arithmetic and text form; the
  one definition every layer uses.
* ``storage_shape`` — the storage shape derived from origin shape/format, dtype, platform,
  groups and reshape type.
* ``default_reshape_type`` / ``expand_rank`` / ``drop_expansion`` — rank expansion.
* ``to_storage`` / ``from_storage`` — numpy layout transforms (zero padding in, dropped out;
  round trips are the identity); ``TRANSFORMS`` lists the supported (origin, storage) pairs.
* ``conversion_exists`` / ``CONVERSIONS`` — which storage->storage conversions exist.

Every invalid request raises ``FormatError`` (a ``ValueError``). User documentation:
``docs/formats-library.md``.
"""

from tilegraph.formats.dims import (
    UNKNOWN,
    Dim,
    DimError,
    ceil_div,
    dim_from_text,
    dim_mul,
    dim_to_text,
    dims_compatible,
    is_static,
    is_symbolic,
    is_unknown,
    normalize_dim,
    parse_expression,
    shape_symbol,
)
from tilegraph.formats.dtype import DType, is_ml_dtypes, is_ml_dtypes_float, parse_dtype
from tilegraph.formats.format import (
    AXIS_FORMATS_3D,
    AXIS_FORMATS_4D,
    ORIGIN_FORMATS,
    Format,
    FormatError,
    parse_format,
)
from tilegraph.formats.platform import DEFAULT_PLATFORM, PLATFORMS, Platform, c0_for, get_platform
from tilegraph.formats.reshape_type import (
    check_reshape_type,
    default_reshape_type,
    drop_expansion,
    expand_rank,
    expansion_mask,
)
from tilegraph.formats.shape import storage_shape
from tilegraph.formats.transform import (
    CONVERSIONS,
    TRANSFORMS,
    conversion_exists,
    from_storage,
    nz_pack,
    nz_unpack,
    to_storage,
)

__all__ = [
    "AXIS_FORMATS_3D",
    "AXIS_FORMATS_4D",
    "CONVERSIONS",
    "DEFAULT_PLATFORM",
    "Dim",
    "DimError",
    "DType",
    "Format",
    "FormatError",
    "ORIGIN_FORMATS",
    "PLATFORMS",
    "Platform",
    "TRANSFORMS",
    "UNKNOWN",
    "c0_for",
    "ceil_div",
    "check_reshape_type",
    "conversion_exists",
    "default_reshape_type",
    "dim_from_text",
    "dim_mul",
    "dim_to_text",
    "dims_compatible",
    "drop_expansion",
    "expand_rank",
    "expansion_mask",
    "from_storage",
    "get_platform",
    "is_static",
    "is_symbolic",
    "is_unknown",
    "normalize_dim",
    "nz_pack",
    "nz_unpack",
    "is_ml_dtypes",
    "is_ml_dtypes_float",
    "parse_dtype",
    "parse_expression",
    "parse_format",
    "shape_symbol",
    "storage_shape",
    "to_storage",
]
