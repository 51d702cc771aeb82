"""The all-core barrier: every block of a launch waits until all have reached it (Ascend
C's ``SyncAll``).

``tile.sync_all {mode = "hard", cores = "all"}`` stops the block (core) that issues it until
every block of its launch has issued it as many times; then all go on, and everything any
block wrote to GM before it is visible to every block after it. It is what a kernel whose
blocks hand data to one another through GM needs between the writes and the reads (a
recurrent layer shared over the cores: each block writes its columns of ``h_t``, the
barrier, then each reads the whole of it).

============  ===============================================================================
``mode``      ``"hard"``: the chip's all-core synchronisation instruction (Ascend C's
              ``SyncAll()``; on Atlas A2 only) — no workspace. ``"soft"``: the software
              barrier of ``SyncAll(gmWorkspace, ubWorkspace)`` on presets without it (310P's
              AI cores): every core writes its arrival to its own 32-byte slot of a
              zero-initialised GM workspace and polls the others' (:data:`SOFT_SLOT_BYTES`
              per core, in GM and in UB). The workspaces are the op's operands,
              ``tile.sync_all %ws, %ub : memref<{8n}xi32, "GM">, memref<{8n}xi32, "UB">
              {mode = "soft", ...}`` (:func:`soft_workspace_type`; ``tile-kernels`` adds
              the GM one as a kernel argument the host allocates and zero-fills before
              each launch, and the UB one as a buffer of the kernel, which the UB plan
              reserves: :mod:`tilegraph.lowering.analysis.barrier_workspace`)
``cores``     ``"all"``: in a mix kernel both parts — Ascend C's ``isAIVOnly = false``:
              the AIVs' and the AICs' barriers, then one between the two; ``"aiv"``: only the
              vector cores of the launch (``isAIVOnly = true``, a vector kernel's blocks)
============  ===============================================================================

The op fences pipe ``ALL`` of its core (no pipe goes on until every pipe has completed
everything before it, as ``tile.pipe_barrier {pipe = "ALL"}``; the scalar unit, pipe S,
issues it) and then until the other blocks arrive. It is legal only inside a kernel
function (``tile.kernel`` "cube" or "vector"). A kernel holding it must run all its
launch's blocks at once (Ascend C: a block count over the cores hangs): the executors run
the blocks in lockstep, switching blocks at the barrier
(:mod:`tilegraph.runtime.tile_interpreter.cross_core`), and report a barrier some block
never reaches as a deadlock.

Verified: ``mode`` and ``cores`` known, the op inside a kernel, a soft barrier with a 1-D
``i32`` GM workspace and a 1-D ``i32`` UB workspace of 32 bytes per block of the kernel's
``tile.blocks`` each (when it states them), a hard one with none. A soft barrier *writes*
its GM workspace (:meth:`SyncAllOp.written`: the arrival), so memory planning sees the
launch write it. Whether a kernel has the barriers its blocks' GM exchange needs is
:mod:`tilegraph.lowering.analysis.barrier_check`'s question.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, StringAttr, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, prop_def, var_operand_def
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import TileOp, memref_shape, scope_of, scoped_memref

SYNC_ALL_MODES = ("hard", "soft")
SYNC_ALL_CORES = ("all", "aiv")
SOFT_SLOT_BYTES = 32
"""Bytes of GM (and of UB) workspace a soft barrier needs per core (Ascend C
``SyncAll``: at least cores x 32 bytes, the GM part zero-initialised)."""
SOFT_SLOT_ELEMENTS = SOFT_SLOT_BYTES // 4
"""``i32`` elements of one core's slot (Ascend C's ``GlobalTensor<int32_t>`` workspace)."""
KERNEL_FUNCTION_ATTR = "tile.kernel"
"""The function attribute marking a kernel (its unit), set by ``lower-graph-to-kernels``."""
BLOCKS_FUNCTION_ATTR = "tile.blocks"
"""The function attribute of a kernel that shares itself over the cores: the blocks every
launch of it runs (set by ``tile-kernels``)."""


def soft_workspace_type(blocks: int, scope: str = "GM") -> MemRefType:
    """The GM (or UB) workspace of a soft barrier over ``blocks`` blocks: ``blocks x 32``
    bytes of ``i32`` (Ascend C: at least cores x 32 bytes each, an ``int32_t`` global /
    local tensor)."""
    return scoped_memref([blocks * SOFT_SLOT_ELEMENTS], i32, scope)


def _kernel_function(op: TileOp) -> func.FuncOp | None:
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    return fn


@irdl_op_definition
class SyncAllOp(TileOp):
    """``tile.sync_all {mode = "hard", cores = "all"}``: see the module docstring."""

    name = "tile.sync_all"
    PIPE: ClassVar[str] = "S"
    """Issued by the scalar unit once every pipe of the core has drained (pipe ``ALL``, as
    ``tile.pipe_barrier {pipe = "ALL"}``, whose :meth:`pipe` is S too)."""

    workspaces = var_operand_def(MemRefType)
    """A soft barrier's GM workspace (a kernel argument the host allocates and zero-fills
    before each launch: :func:`soft_workspace_type`), then its UB workspace (a buffer of
    the kernel); a hard barrier has none."""
    mode = prop_def(StringAttr)
    cores = prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "($workspaces^ `:` type($workspaces))? attr-dict"

    def __init__(self, mode: str = "hard", cores: str = "all", workspaces: Sequence[SSAValue] = ()):
        super().__init__(
            operands=[list(workspaces)],
            properties={"mode": StringAttr(mode), "cores": StringAttr(cores)},
        )

    @property
    def workspace(self) -> SSAValue | None:
        """The GM workspace of a soft barrier (None: a hard one, or none given yet)."""
        return self.workspaces[0] if self.workspaces else None

    @property
    def ub_workspace(self) -> SSAValue | None:
        """The UB workspace of a soft barrier (Ascend C's ``ubWorkspace``)."""
        return self.workspaces[1] if len(self.workspaces) > 1 else None

    def written(self) -> SSAValue | None:
        """A soft barrier writes its core's arrival into its slot of the workspace."""
        return self.workspace

    def verify_(self) -> None:
        for what, value, allowed in (
            ("mode", self.mode.data, SYNC_ALL_MODES),
            ("cores", self.cores.data, SYNC_ALL_CORES),
        ):
            if value not in allowed:
                raise VerifyException(
                    f"'{self.name}': unknown {what} {value!r}; it is one of {', '.join(allowed)}"
                )
        fn = _kernel_function(self)
        unit = None if fn is None else fn.attributes.get(KERNEL_FUNCTION_ATTR)
        if not isinstance(unit, StringAttr) or unit.data not in ("cube", "vector"):
            raise VerifyException(
                "an all-core barrier is only legal inside a launched kernel (a function with "
                'tile.kernel = "cube" or "vector")'
            )
        assert fn is not None
        self._verify_workspace(fn.attributes.get(BLOCKS_FUNCTION_ATTR))

    def _verify_workspace(self, blocks: Attribute | None) -> None:
        """Soft: a 1-D ``i32`` GM workspace and a 1-D ``i32`` UB one, each of 32 bytes per
        block of the kernel's launch (when the kernel states its blocks); hard: none."""
        ws = self.workspace
        if self.mode.data == "hard":
            if self.workspaces:
                raise VerifyException(
                    "a hard all-core barrier takes no workspace (the chip's all-core "
                    "synchronisation instruction); only a soft one does"
                )
            return
        if ws is None:
            raise VerifyException(
                "a soft all-core barrier needs its GM workspace (Ascend C's SyncAll("
                f"gmWorkspace, ubWorkspace): {SOFT_SLOT_BYTES} bytes of i32 per core, "
                "zero-initialised), allocated by the host before the launch"
            )
        if len(self.workspaces) != 2:
            raise VerifyException(
                "a soft all-core barrier takes its GM workspace and its UB workspace "
                f"(Ascend C's ubWorkspace: {SOFT_SLOT_BYTES} bytes of i32 per core), "
                f"got {len(self.workspaces)} operand(s)"
            )
        for value, scope in zip(self.workspaces, ("GM", "UB"), strict=True):
            t = value.type
            assert isinstance(t, MemRefType)
            if scope_of(t) != scope or len(memref_shape(t)) != 1 or t.element_type != i32:
                raise VerifyException(
                    f"a soft all-core barrier's {scope} workspace is a 1-D i32 buffer in "
                    f"{scope}, got {t}"
                )
            if isinstance(blocks, IntegerAttr):
                need = blocks.value.data * SOFT_SLOT_ELEMENTS
                if memref_shape(t)[0] < need:
                    raise VerifyException(
                        f"a soft all-core barrier over {blocks.value.data} blocks needs a "
                        f"{scope} workspace of {need} i32 ({SOFT_SLOT_BYTES} bytes per "
                        f"block), got {t}"
                    )


ZERO_FILL_ATTR = "zero_fill"
"""A ``tile.launch`` attribute: the positions of the arguments the runtime zero-fills
before the launch (a soft barrier's GM workspace: Ascend C's ``SyncAll`` needs it zeroed;
:mod:`tilegraph.lowering.analysis.barrier_workspace`)."""


def zero_filled(launch: Operation) -> tuple[int, ...]:
    """The positions of the arguments the runtime zero-fills before ``launch``."""
    found = launch.attributes.get(ZERO_FILL_ATTR)
    if not isinstance(found, ArrayAttr):
        return ()
    return tuple(a.value.data for a in found.data if isinstance(a, IntegerAttr))


def mark_zero_filled(launch: Operation, position: int) -> None:
    """Have the runtime zero-fill argument ``position`` of ``launch`` before it."""
    positions = sorted({*zero_filled(launch), position})
    launch.attributes[ZERO_FILL_ATTR] = ArrayAttr([IntegerAttr(p, i64) for p in positions])


BARRIER_OPS = (SyncAllOp,)
