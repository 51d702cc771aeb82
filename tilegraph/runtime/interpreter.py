"""xDSL interpreter functions for the ``graph`` and ``layout`` dialects.

Runtime values are numpy arrays in the *storage* layout their type names: a kernel that
receives an NC1HWC0 tensor gets NC1HWC0 data. Every graph op runs its reference kernel
(origin semantics): operands are viewed in origin layout, results are laid out as the result
types' storage formats say. ``layout.trans_data`` converts through :mod:`tilegraph.formats`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import SSAValue

from tilegraph.dialects.element_conversion import convert as convert_element
from tilegraph.dialects.graph import GRAPH_OPS, ConstantOp, FusedOp, GraphOp, YieldOp
from tilegraph.dialects.graph.provenance import op_label, value_label
from tilegraph.dialects.layout import TransDataOp
from tilegraph.dialects.layout_storage import (
    UnboundShapeError,
    convert,
    origin_array,
    poison_padding,
    storage_array,
)
from tilegraph.dialects.layout_type import TensorType
from tilegraph.formats import DType
from tilegraph.runtime.errors import is_internal, plain_words


class KernelError(RuntimeError):
    """A reference kernel failed. The message names the op (its ONNX node when known,
    :func:`~tilegraph.dialects.graph.provenance.op_label`) and says in plain words what
    failed (:func:`~tilegraph.runtime.errors.plain_words`); ``internal`` is true when the
    failure can only be a bug of tilegraph rather than of the model or the inputs."""

    def __init__(self, message: str, internal: bool = False):
        super().__init__(message)
        self.internal = internal


def _operand_text(value: SSAValue, index: int) -> str:
    return f"operand #{index} (%{value.name_hint})" if value.name_hint else f"operand #{index}"


class ShapeChanged(KernelError):
    """An op produced a result of another shape than its static type: a data-dependent size
    (NonZero's count) that the module was compiled for with other data."""

    def __init__(
        self,
        value: str,
        declared: tuple[int, ...],
        got: tuple[int, ...],
        produced: np.ndarray | None = None,
    ) -> None:
        super().__init__(
            f"{value} has shape {list(got)} at run time; the module was compiled for "
            f"{list(declared)} (a size that depends on the input data)"
        )
        self.value, self.declared, self.got = value, declared, got
        self.produced = produced
        """The op's result as the run computed it (origin layout): what an observation of
        the sizes continues from when the run's own numbers, not the reference's, decide
        them (:func:`~tilegraph.runtime.binding.observe_unknown_dims`)."""


def run_graph_op(
    op: GraphOp, args: tuple[Any, ...], pad_value: float | None = None
) -> tuple[np.ndarray, ...]:
    """Run one graph op on storage-layout arrays (one per present operand); padding lanes of
    the results hold zero, or ``pad_value``. A kernel failure is a :class:`KernelError`; an
    operand whose origin shape is unknown at run time an :class:`UnboundShapeError`, both
    naming the op."""
    present = iter(zip(args, op.operands, strict=True))
    inputs: list[np.ndarray | None] = []
    for index, slot in enumerate(op.operand_slots()):
        if slot is None:
            inputs.append(None)
            continue
        array, value = next(present)
        t = value.type
        try:
            inputs.append(origin_array(array, t) if isinstance(t, TensorType) else array)
        except UnboundShapeError as e:
            raise e.located(f"{op_label(op)}, {_operand_text(value, index)}") from None
    try:
        # ONNX arithmetic is IEEE: an overflow to inf, a NaN cast to an integer are values
        # the model computes (onnxruntime gives them too), not faults to warn about
        with np.errstate(all="ignore"):
            outputs = op.reference(*inputs)
    except UnboundShapeError as e:
        raise e.located(op_label(op)) from None
    except Exception as e:
        raise KernelError(f"{op_label(op)}: {plain_words(e)}", is_internal(e)) from e
    results = []
    for out, res in zip(outputs, op.results, strict=True):
        t = res.type
        if isinstance(t, TensorType):
            out = np.asarray(out)
            if t.dtype == DType.bfloat16 and out.dtype == np.float32:
                # a float32 container: every op rounds its result, as bf16 hardware does
                # (NaNs kept as they are: a conversion would canonicalise their payload)
                out = np.where(np.isnan(out), out, convert_element(out, DType.bfloat16))
            if t.is_static and out.shape != (declared := _static_shape(t)):
                raise ShapeChanged(value_label(res), declared, out.shape, out)
            results.append(storage_array(out, t, pad_value))
        else:
            results.append(out)
    return tuple(results)


def _static_shape(t: TensorType) -> tuple[int, ...]:
    return tuple(int(d) for d in t.origin_shape)  # type: ignore[arg-type]


def _make_impl(op_cls: type[GraphOp]) -> Any:
    def run(self: GraphFunctions, interpreter: Interpreter, op: GraphOp, args: tuple[Any, ...]):
        return run_graph_op(op, args, self.pad_value)

    run.__name__ = f"run_{op_cls.name.replace('.', '_')}"
    return impl(op_cls)(run)


class GraphFunctions(InterpreterFunctions):
    """One implementation per graph op class, all delegating to the op's ``reference``.

    ``pad_value`` (e.g. NaN) fills the padding lanes of every padded storage tensor produced,
    so that a kernel reading padding is caught by a comparison; None keeps zeros.
    """

    def __init__(self, pad_value: float | None = None):
        self.pad_value = pad_value

    @impl(FusedOp)
    def run_fused(
        self, interpreter: Interpreter, op: FusedOp, args: tuple[Any, ...]
    ) -> tuple[Any, ...]:
        """A fused group runs its member ops in order: the same numbers as unfused."""
        return interpreter.run_ssacfg_region(op.body, args, op.kernel_name.data)

    @impl_terminator(YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: YieldOp, args: tuple[Any, ...]
    ) -> tuple[TerminatorValue, tuple[Any, ...]]:
        return ReturnedValues(args), ()


for _cls in GRAPH_OPS:
    setattr(GraphFunctions, f"run_{_cls.name.replace('.', '_')}", _make_impl(_cls))


def _run_constant(
    self: GraphFunctions, interpreter: Interpreter, op: ConstantOp, args: tuple[Any, ...]
) -> tuple[np.ndarray]:
    # The data is held in the result's storage layout already (fold-trans-data stores
    # converted weights), so it is not laid out again.
    (data,) = op.reference()
    t = op.output.type
    assert isinstance(t, TensorType)
    return (poison_padding(data, t, self.pad_value),)


GraphFunctions.run_graph_constant = impl(ConstantOp)(_run_constant)  # type: ignore[attr-defined]
register_impls(GraphFunctions)


@register_impls
class LayoutFunctions(InterpreterFunctions):
    """``layout.trans_data`` through :mod:`tilegraph.formats` (``pad_value`` as above)."""

    def __init__(self, pad_value: float | None = None):
        self.pad_value = pad_value

    @impl(TransDataOp)
    def run_trans_data(
        self, interpreter: Interpreter, op: TransDataOp, args: tuple[Any, ...]
    ) -> tuple[np.ndarray]:
        source, target = op.input.type, op.output.type
        assert isinstance(source, TensorType) and isinstance(target, TensorType)
        try:
            return (convert(args[0], source, target, self.pad_value),)
        except UnboundShapeError as e:
            raise e.located(op_label(op)) from None
