"""The shared model of the format engine: kernel choices and the storage they imply.

Every graph op declares its kernel variants in ``FACTS.kernels`` (e.g. conv2d: ``cube`` =
(NC1HWC0, FRACTAL_Z, NC1HWC0) -> NC1HWC0, ``plain`` = (NCHW, NCHW, ND) -> NCHW). A *kernel
choice* picks one variant and, for variants with ``ANY_FORMAT`` slots (elementwise ops), the
shared storage format of those slots. From a choice follow the storage type each operand must
arrive in and the storage type each result is produced in.

* ``select-storage-format`` enumerates :meth:`LayoutPlanner.choices`, picks one per op with a
  strategy, and records it with :func:`commit_choice`: the op gets the attributes
  ``layout.kernel = "<variant>"`` (and ``layout.shared = "<format>"`` for ANY slots). Types
  do not change yet, so the IR stays valid between the passes.
* ``insert-trans-data`` reads the choice back (:func:`read_choice`), retypes the op's results
  to the storage its kernel produces (:func:`retype_results`) and converts every operand
  whose storage differs from :meth:`LayoutPlanner.operand_type`.

Rules:

* A variant format that is an *origin* format (ND, NCHW, ...) means "the tensor's origin view,
  no conversion": the plain kernels run on what the user has.
* A storage format (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, ...) applies to an operand only if the
  conversion from its origin format exists and its storage shape can be derived (rank
  expansion with the op's ``reshape_types``). A variant that does not apply to every
  format-carrying operand is not a choice for that op.
* ANY slots take either the origin views (``shared = None``) or one storage format for all of
  them: NC1HWC0 for NCHW/NHWC tensors, NDC1HWC0 for ops on a 5-D tensor of a 3-D axis format
  (NCDHW: what a 3-D convolution's epilogue shares), FRACTAL_NZ for equal-shaped rank >= 2
  tensors. For a
  broadcasting op NC1HWC0 is allowed only when each low-rank operand's rank expansion puts its
  dims where numpy broadcasting does (a ``[C, 1, 1]`` bias, not a ``[W]`` vector).
* Operands outside ``FACTS.format_operands`` (shape/axes inputs) have no requirement.
* Operand slots beyond a variant's list (the inputs of a variadic op such as ``graph.sum``)
  are ANY slots.
* An op instance may refuse a choice its class declares (``GraphOp.storage_applies``, given
  the storage types the choice implies): concat, split and slice declare an ANY variant
  but take NC1HWC0 only where whole C0 blocks move (``dialects/graph/movement_storage.py``).
* Small-channel variants (``KernelVariant.small_channel_of``, conv2d's ``cube_c04``) are
  offered only by a planner in small-channel mode (ATC's ``--enable_small_channel``), and
  there *instead of* the variant they replace, wherever they apply: an ungrouped op whose
  data operand (operand 0) has a known channel count of at most 4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.graph import ANY_FORMAT, GraphOp, KernelVariant
from tilegraph.dialects.graph.constant_ops import ConstantOp
from tilegraph.dialects.layout_type import DEFAULT_PLATFORM, TensorType
from tilegraph.formats import Format, FormatError, conversion_exists, expand_rank

KERNEL_ATTR = "layout.kernel"
SHARED_ATTR = "layout.shared"
ORIGIN_VARIANT = "origin"
"""The implicit variant of ops that declare no kernels: everything in its origin view."""

_SHARED_CANDIDATES = (Format.NC1HWC0, Format.FRACTAL_NZ, Format.NDC1HWC0)


@dataclass(frozen=True)
class KernelChoice:
    """One variant of an op's kernel and the storage format of its ANY slots."""

    variant: str
    shared: Format | None = None

    def __str__(self) -> str:
        return self.variant if self.shared is None else f"{self.variant}[{self.shared}]"


def origin_view(t: TensorType) -> TensorType:
    """The type with storage equal to origin."""
    if t.storage_format == t.origin_format:
        return t
    return TensorType(t.origin_shape, t.element_type, t.origin_format)


def _numpy_aligned(t: TensorType, rank: int, reshape_type: str | None) -> bool:
    """Whether rank expansion of a low-rank operand matches numpy's right alignment."""
    if t.rank >= rank:
        return True
    try:
        expanded = expand_rank(list(t.origin_shape), t.origin_format, reshape_type)
    except FormatError:
        return False
    numpy_style = [1] * (rank - t.rank) + list(t.origin_shape)
    return list(expanded) == numpy_style


def _groups(op: GraphOp, index: int, fmt: Format) -> int:
    """The groups a weight is stored with: a grouped convolution's filter (operand 1) in
    FRACTAL_Z keeps its groups, so that the layout packs them by the groups rule of
    formats.md (GE's grouped FRACTAL_Z) instead of a dense filter the cube cannot use."""
    if index != 1 or fmt not in (Format.FRACTAL_Z, Format.FRACTAL_Z_3D):
        return 1
    group = op.attr("group") if "group" in dict(op.get_irdl_definition().properties) else None
    return group if isinstance(group, int) and group > 1 else 1


def _small_channel_op(op: GraphOp) -> bool:
    """Whether ``op`` may run a small-channel variant: ungrouped, and its data operand's
    channels (axis C of its origin format) known and at most 4 (ATC's C04 condition)."""
    if "group" in dict(op.get_irdl_definition().properties) and op.attr("group") != 1:
        return False
    data = op.operand_slots()[0]
    if data is None or not isinstance(t := data.type, TensorType):
        return False
    axis = t.origin_format.name.find("C") if t.origin_format.is_origin else -1
    if axis < 0 or axis >= t.rank:
        return False
    channels = t.origin_shape[axis]
    return isinstance(channels, int) and 0 < channels <= 4


class LayoutPlanner:
    """Kernel choices of ops and the storage types they imply, for one platform.

    ``small_channel``: ATC's small-channel mode (module docstring)."""

    def __init__(self, platform: str = DEFAULT_PLATFORM, small_channel: bool = False):
        self.platform = platform
        self.small_channel = small_channel

    # ---- storage types ------------------------------------------------------------------
    def storage_type(
        self, t: TensorType, fmt: Format, reshape_type: str | None = None, groups: int = 1
    ) -> TensorType | None:
        """``t`` with storage ``fmt`` (origin formats mean the origin view), or None when the
        conversion does not exist or the storage shape cannot be derived."""
        if fmt.is_origin:
            return origin_view(t)
        if t.rank == 0 or not conversion_exists(t.origin_format, fmt):
            return None
        try:
            return t.with_storage(
                fmt, reshape_type=reshape_type, groups=groups, platform=self.platform
            )
        except (FormatError, VerifyException, ValueError):
            return None

    # ---- choices ------------------------------------------------------------------------
    def variants(self, op: GraphOp) -> Sequence[KernelVariant]:
        """The variants offered for ``op``, preferred first: small-channel ones (in
        small-channel mode, where they apply) first and in place of those they replace."""
        declared = op.FACTS.kernels
        regular = [v for v in declared if not v.small_channel_of]
        if not self.small_channel or len(regular) == len(declared) or not _small_channel_op(op):
            return regular
        small = [v for v in declared if v.small_channel_of and self._applies(op, v, shared=None)]
        replaced = {v.small_channel_of for v in small}
        return [*small, *(v for v in regular if v.name not in replaced)]

    def choices(self, op: Operation) -> list[KernelChoice]:
        """Every kernel choice that applies to ``op`` (at least one for a graph op)."""
        if not isinstance(op, GraphOp) or isinstance(op, ConstantOp):
            return []
        found: list[KernelChoice] = []
        for variant in self.variants(op):
            shareds: list[Format | None] = [None]
            if ANY_FORMAT in (*variant.operands, *variant.results):
                shareds += list(_SHARED_CANDIDATES)
            for shared in shareds:
                choice = KernelChoice(variant.name, shared)
                if self._applies(op, variant, shared):
                    found.append(choice)
        if not found:
            found.append(KernelChoice(ORIGIN_VARIANT))
        return found

    def _variant(self, op: GraphOp, choice: KernelChoice) -> KernelVariant | None:
        # every declared variant: a committed choice is read back whatever the mode
        for v in op.FACTS.kernels:
            if v.name == choice.variant:
                return v
        if choice.variant == ORIGIN_VARIANT:
            return None
        raise ValueError(f"{op.name} has no kernel variant '{choice.variant}'")

    def _slot_format(self, fmt: Format | None, shared: Format | None) -> Format | None:
        """The storage format of a slot: ``None`` = origin view."""
        if fmt is ANY_FORMAT:
            return shared
        assert fmt is not None
        return None if fmt.is_origin else fmt

    def _applies(self, op: GraphOp, variant: KernelVariant, shared: Format | None) -> bool:
        facts = op.FACTS
        slots = op.operand_slots()
        tensors: list[TensorType] = []
        operand_types: list[TensorType | None] = [None] * len(slots)
        result_types: list[TensorType] = []
        for i, value in enumerate(slots):
            if value is None or not facts.takes_part_in_format(i):
                continue
            t = value.type
            assert isinstance(t, TensorType)
            fmt = variant.operands[i] if i < len(variant.operands) else ANY_FORMAT
            if fmt is not None and fmt.is_origin and fmt != Format.ND and t.rank != 0:
                # a plain kernel for a format: the tensor must be in that format or ND
                if t.origin_format not in (fmt, Format.ND) and t.rank == fmt.rank:
                    return False
            slot = self._slot_format(fmt, shared)
            stored = (
                origin_view(t)
                if slot is None
                else self.storage_type(t, slot, facts.reshape_types.get(i), _groups(op, i, slot))
            )
            if stored is None:
                return False
            operand_types[i] = stored
            tensors.append(t)
        for j, res in enumerate(op.results):
            fmt = variant.results[j] if j < len(variant.results) else ANY_FORMAT
            slot = self._slot_format(fmt, shared)
            t = res.type
            assert isinstance(t, TensorType)
            stored = origin_view(t) if slot is None else self.storage_type(t, slot)
            if stored is None:
                return False
            result_types.append(stored)
            tensors.append(t)
        if shared is not None and not self._shared_ok(op, tensors, shared):
            return False
        return op.storage_applies(operand_types, result_types)

    def _shared_ok(self, op: GraphOp, tensors: list[TensorType], shared: Format) -> bool:
        if not tensors:
            return False
        if shared == Format.FRACTAL_NZ:
            first = tensors[0].origin_shape
            if tensors[0].rank < 2 or any(t.origin_shape != first for t in tensors):
                return False
            # One fractal for every slot: a 1-byte type's fractal is 16x32, a wider one's
            # 16x16, and an elementwise kernel walks all its slots with one tile.
            fractals = {self.storage_type(t, shared).storage_shape[-1] for t in tensors}  # type: ignore[union-attr]
            return len(fractals) == 1
        rank = max(t.rank for t in tensors)
        if shared == Format.NDC1HWC0 and not any(
            t.rank == 5 and t.origin_format.is_3d for t in tensors
        ):
            return False  # a 4-D origin would take D = 1: not what a 2-D model shares
        reshape_types = op.FACTS.reshape_types
        slots = op.operand_slots()
        for i, value in enumerate(slots):
            if value is None or not op.FACTS.takes_part_in_format(i):
                continue
            t = value.type
            assert isinstance(t, TensorType)
            if not _numpy_aligned(t, rank, reshape_types.get(i)):
                return False
        return True

    # ---- what a choice implies ----------------------------------------------------------
    def operand_type(self, op: GraphOp, choice: KernelChoice, index: int) -> TensorType | None:
        """The storage type operand ``index`` must arrive in (None: no requirement)."""
        slots = op.operand_slots()
        value = slots[index]
        if value is None or not op.FACTS.takes_part_in_format(index):
            return None
        t = value.type
        assert isinstance(t, TensorType)
        variant = self._variant(op, choice)
        if variant is None:
            return origin_view(t)
        fmt = variant.operands[index] if index < len(variant.operands) else ANY_FORMAT
        slot = self._slot_format(fmt, choice.shared)
        if slot is None:
            return origin_view(t)
        result = self.storage_type(
            t, slot, op.FACTS.reshape_types.get(index), _groups(op, index, slot)
        )
        if result is None:
            raise ValueError(f"{op.name}: {choice} does not apply to operand #{index}")
        return result

    def operand_types(self, op: GraphOp, choice: KernelChoice) -> list[TensorType | None]:
        """Requirements by operand slot (absent optional operands included as None)."""
        return [self.operand_type(op, choice, i) for i in range(len(op.operand_slots()))]

    def result_type(self, op: GraphOp, choice: KernelChoice, index: int) -> TensorType:
        """The storage type result ``index`` is produced in."""
        t = op.results[index].type
        assert isinstance(t, TensorType)
        variant = self._variant(op, choice)
        if variant is None:
            return origin_view(t)
        fmt = variant.results[index] if index < len(variant.results) else ANY_FORMAT
        slot = self._slot_format(fmt, choice.shared)
        if slot is None:
            return origin_view(t)
        result = self.storage_type(t, slot)
        if result is None:
            raise ValueError(f"{op.name}: {choice} does not apply to result #{index}")
        return result


def read_choice(op: Operation) -> KernelChoice | None:
    """The committed kernel choice of ``op`` (None if storage selection has not run)."""
    kernel = op.attributes.get(KERNEL_ATTR)
    if not isinstance(kernel, StringAttr):
        return None
    shared = op.attributes.get(SHARED_ATTR)
    return KernelChoice(
        kernel.data, Format(shared.data) if isinstance(shared, StringAttr) else None
    )


def commit_choice(op: GraphOp, choice: KernelChoice) -> None:
    """Record ``choice`` on ``op`` (``layout.kernel``, ``layout.shared``)."""
    op.attributes[KERNEL_ATTR] = StringAttr(choice.variant)
    if choice.shared is not None:
        op.attributes[SHARED_ATTR] = StringAttr(str(choice.shared))
    else:
        op.attributes.pop(SHARED_ATTR, None)


def retype_results(planner: LayoutPlanner, op: GraphOp, choice: KernelChoice) -> None:
    """Give ``op``'s results the storage types its kernel choice produces."""
    new_types = [planner.result_type(op, choice, j) for j in range(len(op.results))]
    for res, t in zip(list(op.results), new_types, strict=True):
        if res.type != t:
            Rewriter.replace_value_with_new_type(res, t)
