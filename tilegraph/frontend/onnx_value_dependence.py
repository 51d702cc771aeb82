"""The located errors of a node the ONNX importer (:mod:`tilegraph.frontend.onnx_importer`)
cannot type until some inputs are known: a :class:`ValueDependentError` naming the inputs
whose shapes or values decide it
(:func:`~tilegraph.dialects.graph.input_dependence.input_dependence` through ``resolve``, what
each block argument of the import stands for), so that the import can be repeated with them
bound; the plain error when no input decides it.
"""

from __future__ import annotations

import onnx
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.input_dependence import ArgResolver, input_dependence
from tilegraph.frontend.onnx_errors import OnnxImportError, ValueDependentError
from tilegraph.symbolic.inference import DimSizesNeeded


def sizes_needed(
    node: onnx.NodeProto,
    operand: SSAValue | None,
    label: str,
    problem: DimSizesNeeded,
    resolve: ArgResolver,
) -> OnnxImportError:
    """A node whose result rank depends on symbolic sizes of ``operand``: a
    :class:`ValueDependentError` naming the inputs whose shapes decide them (the import
    is repeated with those shapes bound), or a plain located error when none does."""
    found = input_dependence(operand, resolve, of_shape=True) if operand else None
    if not found:
        return OnnxImportError(f"{label}: {problem}")
    return ValueDependentError(
        f"{label}: {problem}; the rank depends on the shapes of input(s) "
        f"{', '.join(found.shapes)}: give concrete inputs (tilegraph-run --input or --dim, "
        "or call a Session) so that it is known when compiling",
        node.name or node.output[0],
        found.shapes,
        [],
        how="has a rank set by",
    )


def value_dependent(
    node: onnx.NodeProto,
    cond: SSAValue | None,
    label: str,
    problem: OnnxImportError,
    resolve: ArgResolver,
) -> OnnxImportError:
    """An If that could not be built while its condition is unknown (its branches return
    different ranks, or the untaken branch does not fit these shapes): a
    :class:`ValueDependentError` naming the inputs whose shapes or values decide the
    condition (with those of an inner If), or ``problem`` itself when none does."""
    found = input_dependence(cond, resolve) if cond is not None else None
    shapes = list(found.shapes) if found else []
    values = list(found.values) if found else []
    here = node.name or node.output[0]
    if isinstance(problem, ValueDependentError):
        deciders = {**{n: here for n in shapes + values}, **problem.deciders}
        deciders.update({n: problem.node for n in problem.shape_inputs + problem.value_inputs})
        shapes += [n for n in problem.shape_inputs if n not in shapes]
        values += [n for n in problem.value_inputs if n not in values]
        return ValueDependentError(
            str(problem), problem.node, shapes, values, deciders, problem.how
        )
    if not shapes and not values:
        return problem
    parts = [f"the shapes of input(s) {', '.join(shapes)}"] if shapes else []
    parts += [f"the value(s) of input(s) {', '.join(values)}"] if values else []
    return ValueDependentError(
        f"{problem}; the branch that runs depends on {' and '.join(parts)}: give concrete "
        "inputs (tilegraph-run --input, or call a Session) so that the branch is chosen "
        "when compiling",
        here,
        shapes,
        values,
    )
