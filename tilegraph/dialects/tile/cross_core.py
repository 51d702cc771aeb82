"""Ordering between the cores of a decoupled group: cross-core flags (HIVM's
``sync_block_set`` / ``sync_block_wait``, Ascend C's ``CrossCoreSetFlag`` /
``CrossCoreWaitFlag``).

On a decoupled preset (910B: ``HardwareModel.coupled`` is False) a kernel that needs both
the cube and the vector unit is a *mix kernel*: an AIC function (L1, L0A, L0B, L0C, FIX)
and an AIV function (UB) launched together (``tile.launch ... {aiv = @..., aiv_blocks}``,
:mod:`tilegraph.dialects.tile.host`), exchanging data through a GM workspace. They order
the workspace's producer and consumer with flags:

================================================  ==========================================
``tile.sync_block_set [%slot] {flag, mode, pipe}``  issued on ``pipe`` of the sending core:
                                                    once everything ``pipe`` was given
                                                    before it has completed, adds one to the
                                                    receiving core's counter of ``flag``
``tile.sync_block_wait [%slot] {flag, mode, pipe}`` issued on ``pipe`` of the receiving
                                                    core: ``pipe`` stalls until the counter
                                                    of ``flag`` is positive, then takes one
================================================  ==========================================

``mode`` is the direction, ``"aic_to_aiv"`` or ``"aiv_to_aic"``, between an AIC and the
``r`` AIVs of its core group (``aiv_blocks = r * blocks``), with Ascend C's mode-2 meaning:
an AIC's set adds one to the counter of ``flag`` on *every* AIV of its group; an AIV's set
adds one to the AIC's counter of ``flag`` *from that AIV*, and an AIC's wait stalls until
the counter from every AIV of the group is positive, then takes one from each (it waits
for all of them). A set and the wait it pairs with carry the same mode. Flag ids
are 0-10 (:data:`CROSS_CORE_FLAGS`); with a ``slot`` operand the flag is ``flag + slot``
(one flag per workspace slot). A counter holds at most :data:`CROSS_CORE_MAX_PENDING` sets
that were not waited for. The executors run the two parts in an order these flags allow
(:mod:`tilegraph.runtime.tile_interpreter.cross_core`); the pipe-queue checker
(:mod:`tilegraph.lowering.analysis.sync_check`) checks them.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, opt_operand_def, prop_def
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import TileOp
from tilegraph.dialects.tile.sync import PIPES

CROSS_CORE_FLAGS = 11
"""Flag ids 0-10 (Ascend C ``CrossCoreSetFlag``)."""
CROSS_CORE_MAX_PENDING = 16
"""Sets a flag's counter holds before it is waited for (Ascend C)."""
MODES = ("aic_to_aiv", "aiv_to_aic")
AIC_PIPES = frozenset(("MTE1", "MTE2", "M", "FIX", "S"))
"""The pipes an AIC has (no vector unit, no UB -> GM)."""
AIV_PIPES = frozenset(("MTE2", "MTE3", "V", "S"))
"""The pipes an AIV has."""


class CrossCoreOp(TileOp):
    """Base of the cross-core flag ops: a flag id, a direction, the pipe issuing it."""

    flag = prop_def(IntegerAttr)
    mode = prop_def(StringAttr)
    pipe_name = prop_def(StringAttr, prop_name="pipe")
    slot = opt_operand_def(IndexType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "(`[` $slot^ `]`)? attr-dict"

    SENDS: ClassVar[bool] = True
    """A set (the sending side) or a wait (the receiving side)."""

    def __init__(self, flag: int, mode: str, pipe: str, slot: SSAValue | None = None):
        super().__init__(
            operands=[[slot] if slot is not None else []],
            properties={
                "flag": IntegerAttr(flag, i64),
                "mode": StringAttr(mode),
                "pipe": StringAttr(pipe),
            },
        )

    def pipe(self) -> str:
        return self.pipe_name.data

    @property
    def flag_id(self) -> int:
        return self.flag.value.data

    @property
    def core(self) -> str:
        """The core this op is issued on: "aic" or "aiv"."""
        sender, receiver = self.mode.data.split("_to_")
        return sender if self.SENDS else receiver

    def verify_(self) -> None:
        if self.mode.data not in MODES:
            raise VerifyException(
                f"'{self.name}': unknown mode {self.mode.data!r}; modes are {', '.join(MODES)}"
            )
        if self.pipe() not in PIPES:
            raise VerifyException(
                f"'{self.name}': unknown pipe {self.pipe()!r}; pipes are {', '.join(PIPES)}"
            )
        pipes = AIC_PIPES if self.core == "aic" else AIV_PIPES
        if self.pipe() not in pipes:
            raise VerifyException(
                f"'{self.name}': the {self.core.upper()} has no {self.pipe()} pipe "
                f"(it has {', '.join(sorted(pipes))})"
            )
        if not 0 <= self.flag_id < CROSS_CORE_FLAGS:
            raise VerifyException(
                f"'{self.name}': flag {self.flag_id} out of range; cross-core flags are "
                f"0-{CROSS_CORE_FLAGS - 1}"
            )


@irdl_op_definition
class SyncBlockSetOp(CrossCoreOp):
    """``tile.sync_block_set [%slot] {flag = 0, mode = "aic_to_aiv", pipe = "FIX"}``: see the
    module docstring."""

    name = "tile.sync_block_set"
    SENDS: ClassVar[bool] = True


@irdl_op_definition
class SyncBlockWaitOp(CrossCoreOp):
    """``tile.sync_block_wait [%slot] {flag = 0, mode = "aic_to_aiv", pipe = "MTE2"}``: see
    the module docstring."""

    name = "tile.sync_block_wait"
    SENDS: ClassVar[bool] = False


CROSS_CORE_OPS = (SyncBlockSetOp, SyncBlockWaitOp)
