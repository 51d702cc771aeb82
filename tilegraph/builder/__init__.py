"""Build graph-level IR in Python, without ONNX or MLIR text (``docs/builder.md``).

>>> import numpy as np
>>> from tilegraph.builder import GraphBuilder
>>> b = GraphBuilder("net")
>>> x = b.input("x", ["N", 3, 8, 8], "float32", format="NCHW")
>>> w = b.constant(np.ones([4, 3, 3, 3], np.float32), "NCHW")
>>> y = b.relu(b.conv2d(x, w, pads=[1, 1, 1, 1]))
>>> print(y.type)
!layout.tensor<[N, 4, 8, 8], f32, NCHW>
>>> b.output(y, name="y")
>>> module = b.build()

Every ``graph`` op of :data:`~tilegraph.dialects.graph.GRAPH_OPS` is a method of
:class:`GraphBuilder`, generated from its op class (:data:`OP_METHODS`): named after the op
(``graph.max_pool`` -> ``b.max_pool``; ``and_``, ``or_``, ``not_`` for Python's keywords;
ONNX's long names as :data:`ALIASES`), taking operands positionally or by name (numpy data
becomes a ``graph.constant``; ``None`` leaves an optional operand out) and ONNX attributes
as keywords (left out: the ONNX default), plus ``name=`` for the SSA name. It returns the
result, or a tuple for an op with several results; the result type comes from the op's
shape function, so a shape error is raised where the op is built.

Errors name the method and the argument: TypeError for a missing, extra, repeated or
ill-typed operand or attribute; ValueError (ShapeError from shape functions) for values the
op refuses.

What it makes is what the ONNX importer makes, with the importer's helpers: inputs are the
arguments of one ``func.func @main`` (the entry every tool runs), named dims are symbols
named as the importer names dim_params, anonymous dims fresh symbols, constants are held as
the importer holds them, and the function carries the inputs' and outputs' names where they
are not the SSA names. One difference: an input's origin format is the one given (default
ND), where the importer makes a 4-D Conv's data input NCHW; ``infer-origin-format`` (in
every format pipeline) infers that one.
"""

from tilegraph.builder.graph_builder import ENTRY, OP_METHODS, GraphBuilder, Operand
from tilegraph.builder.op_methods import ALIASES, OpSpec

__all__ = ["ALIASES", "ENTRY", "OP_METHODS", "GraphBuilder", "OpSpec", "Operand"]
