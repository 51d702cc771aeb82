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
              per core, in GM and in UB). The GM workspace is the op's operand,
              ``tile.sync_all %ws : memref<{8n}xi32, "GM"> {mode = "soft", ...}``
              (:func:`soft_workspace_type`; ``tile-kernels`` adds it as a kernel argument
              the host allocates, :mod:`tilegraph.lowering.analysis.barrier_workspace`)
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
``i32`` GM workspace of 32 bytes per block of the kernel's ``tile.blocks`` (when it states
them), a hard one with none. A soft barrier *writes* its workspace (:meth:`SyncAllOp.written`:
the arrival), so memory planning sees the launch write it. Whether a kernel has the
barriers its blocks' GM exchange needs is :mod:`tilegraph.lowering.analysis.barrier_check`'s
question.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, opt_operand_def, prop_def
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


def soft_workspace_type(blocks: int) -> MemRefType:
    """The GM workspace of a soft barrier over ``blocks`` blocks: ``blocks x 32`` bytes of
    ``i32`` (Ascend C: at least cores x 32 bytes, an ``int32_t`` global tensor)."""
    return scoped_memref([blocks * SOFT_SLOT_ELEMENTS], i32, "GM")


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

    workspace = opt_operand_def(MemRefType)
    """A soft barrier's GM workspace (a kernel argument the host allocates before each
    launch: :func:`soft_workspace_type`); a hard barrier has none."""
    mode = prop_def(StringAttr)
    cores = prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "($workspace^ `:` type($workspace))? attr-dict"

    def __init__(self, mode: str = "hard", cores: str = "all", workspace: SSAValue | None = None):
        super().__init__(
            operands=[[] if workspace is None else [workspace]],
            properties={"mode": StringAttr(mode), "cores": StringAttr(cores)},
        )

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
        """Soft: a 1-D ``i32`` GM workspace of 32 bytes per block of the kernel's launch
        (when the kernel states its blocks); hard: none."""
        ws = self.workspace
        if self.mode.data == "hard":
            if ws is not None:
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
        t = ws.type
        assert isinstance(t, MemRefType)
        if scope_of(t) != "GM" or len(memref_shape(t)) != 1 or t.element_type != i32:
            raise VerifyException(
                f"a soft all-core barrier's workspace is a 1-D i32 buffer in GM, got {t}"
            )
        if isinstance(blocks, IntegerAttr):
            need = blocks.value.data * SOFT_SLOT_ELEMENTS
            if memref_shape(t)[0] < need:
                raise VerifyException(
                    f"a soft all-core barrier over {blocks.value.data} blocks needs a "
                    f"workspace of {need} i32 ({SOFT_SLOT_BYTES} bytes per block), got {t}"
                )


BARRIER_OPS = (SyncAllOp,)
