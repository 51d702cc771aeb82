"""The padding value of the loads that pad: a compile-time property, or a run-time scalar.

``tile.copy`` (a load's fill), ``tile.load_5hd`` (positions outside the NCHW source) and
``tile.load3d`` (img2col outside the image) pad with a value. It is a property when known
at compile time; when it is data — an int8 convolution's data zero point computed by
DynamicQuantizeLinear — it is the op's optional last operand ``pad_scalar``, an index read
on the scalar unit (``tile.get_value``) before the loads, as Ascend C reads a value with
``GetValue`` and sets Load3Dv2's padding register with ``SetLoadDataPaddingValue(value)``
(docs/hardware.md). An op has one of the two, never both. Executors take the operand as the
last argument of the op's kernel: :meth:`RuntimePadding.split_padding` parts it from the
others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException


class RuntimePadding:
    """Mixin of a tile op with an optional last operand ``pad_scalar`` (an index) in place of
    its compile-time padding (:meth:`static_padding`)."""

    if TYPE_CHECKING:  # the op's (irdl reads no annotations of its own here)
        name: str
        pad_scalar: SSAValue | None

    def static_padding(self) -> float:
        """The compile-time padding value (0 when the op has none)."""
        raise NotImplementedError

    def has_static_padding(self) -> bool:
        raise NotImplementedError

    def split_padding(self, args: Sequence[Any]) -> tuple[Sequence[Any], Any]:
        """The kernel's arguments without the run-time pad, and the pad: the last argument
        when the op has ``pad_scalar`` (an int, or per-item values in a batch), else the
        compile-time value."""
        if self.pad_scalar is None:
            return args, self.static_padding()
        return args[:-1], args[-1]

    def padding_splitter(self) -> Callable[[Sequence[Any]], tuple[Sequence[Any], Any]]:
        """:meth:`split_padding` with the op's properties read once (a kernel's per-call
        path: reading an IR property costs microseconds)."""
        if self.pad_scalar is None:
            static = self.static_padding()
            return lambda args: (args, static)
        return lambda args: (args[:-1], args[-1])

    def verify_padding(self) -> None:
        if self.pad_scalar is not None and self.has_static_padding():
            raise VerifyException(
                f"'{self.name}': a padding property and a run-time pad exclude each other"
            )


def declines_runtime_pad(op: Any, batched: Sequence[bool]) -> bool:
    """Whether a batched form should leave ``op`` to the per-value fallback: its run-time
    pad varies along the batch (the forms take it as one value)."""
    return isinstance(op, RuntimePadding) and op.pad_scalar is not None and bool(batched[-1])
