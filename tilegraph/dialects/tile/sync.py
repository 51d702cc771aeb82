"""Ordering between the pipes of one core: flags and barriers (HIVM's synchronisation ops).

The pipes of a core (MTE1, MTE2, MTE3, M, V, FIX, S) each execute their own instructions in
program order but run concurrently with one another. An instruction that consumes what
another pipe produced must wait for it explicitly:

=========================================  ===================================================
``tile.set_flag {src, dst, event}``        issued on ``src``: raises event ``event`` of the
                                           pipe pair (src, dst) once everything ``src`` was
                                           given before it has completed
``tile.wait_flag {src, dst, event}``       issued on ``dst``: ``dst`` stalls until that event
                                           is raised, then lowers it
``tile.pipe_barrier {pipe}``               issued on ``pipe``: the next instruction of
                                           ``pipe`` starts after every earlier one completed
                                           (same-pipe dependences on the vector unit);
                                           ``pipe = "ALL"``: no pipe goes on until every
                                           pipe has completed everything before it
=========================================  ===================================================

Each pipe pair has :data:`EVENTS_PER_PAIR` event ids. The executors run a kernel's ops one
after the other, so for them these ops do nothing; the cycle model and the pipe-queue
checker (:mod:`tilegraph.runtime.pipe_check`) give them their meaning.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, opt_operand_def, prop_def
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import TileOp

PIPES = ("MTE1", "MTE2", "MTE3", "M", "V", "FIX", "S")
EVENTS_PER_PAIR = 8
ALL_PIPES = "ALL"


class SyncOp(TileOp):
    """Base of the synchronisation ops: one cycle on their pipe, nothing for the executors
    (they run one op at a time)."""


class FlagOp(SyncOp):
    """Base of ``set_flag`` / ``wait_flag``: a pipe pair and an event id.

    With a ``slot`` operand (``tile.set_flag [%slot] {...}``) the event is
    ``event + slot``: the ping-pong of a multi-buffered loop uses one event per slot."""

    src = prop_def(StringAttr)
    dst = prop_def(StringAttr)
    event = prop_def(IntegerAttr)
    slot = opt_operand_def(IndexType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "(`[` $slot^ `]`)? attr-dict"

    ISSUED_ON: ClassVar[str] = "src"
    """Which of the two pipes the op is issued on."""

    def __init__(self, src: str, dst: str, event: int, slot: SSAValue | None = None):
        super().__init__(
            operands=[[slot] if slot is not None else []],
            properties={
                "src": StringAttr(src),
                "dst": StringAttr(dst),
                "event": IntegerAttr(event, i64),
            },
        )

    @property
    def pair(self) -> tuple[str, str]:
        return self.src.data, self.dst.data

    @property
    def event_id(self) -> int:
        return self.event.value.data

    def pipe(self) -> str:
        return self.src.data if self.ISSUED_ON == "src" else self.dst.data

    def verify_(self) -> None:
        src, dst = self.pair
        for role, pipe in (("src", src), ("dst", dst)):
            if pipe not in PIPES:
                raise VerifyException(
                    f"'{self.name}': unknown {role} pipe {pipe!r}; pipes are {', '.join(PIPES)}"
                )
        if src == dst:
            raise VerifyException(
                f"'{self.name}': a flag joins two different pipes (use tile.pipe_barrier "
                f"within {src})"
            )
        if not 0 <= self.event_id < EVENTS_PER_PAIR:
            raise VerifyException(
                f"'{self.name}': event {self.event_id} out of range; each pipe pair has "
                f"events 0-{EVENTS_PER_PAIR - 1}"
            )


@irdl_op_definition
class SetFlagOp(FlagOp):
    """``tile.set_flag {src = "MTE2", dst = "MTE1", event = 0}``: see the module docstring."""

    name = "tile.set_flag"
    ISSUED_ON: ClassVar[str] = "src"


@irdl_op_definition
class WaitFlagOp(FlagOp):
    """``tile.wait_flag {src = "MTE2", dst = "MTE1", event = 0}``: see the module docstring."""

    name = "tile.wait_flag"
    ISSUED_ON: ClassVar[str] = "dst"


@irdl_op_definition
class PipeBarrierOp(SyncOp):
    """``tile.pipe_barrier {pipe = "V"}``: see the module docstring."""

    name = "tile.pipe_barrier"
    pipe_name = prop_def(StringAttr, prop_name="pipe")
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, pipe: str):
        super().__init__(properties={"pipe": StringAttr(pipe)})

    @property
    def all_pipes(self) -> bool:
        """A barrier across every pipe (``pipe = "ALL"``)."""
        return self.pipe_name.data == ALL_PIPES

    def pipe(self) -> str:
        # The scalar unit issues a barrier across all pipes.
        return "S" if self.all_pipes else self.pipe_name.data

    def verify_(self) -> None:
        if self.pipe_name.data not in (*PIPES, ALL_PIPES):
            raise VerifyException(
                f"'{self.name}': unknown pipe {self.pipe_name.data!r}; pipes are {', '.join(PIPES)}"
            )


SYNC_OPS = (SetFlagOp, WaitFlagOp, PipeBarrierOp)
