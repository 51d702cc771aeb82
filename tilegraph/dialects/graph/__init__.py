"""The ``graph`` dialect: ONNX-aligned tensor ops on ``!layout.tensor`` values.

Op classes live in family modules; each declares its facts, shape function and reference
kernel on the class (see :mod:`tilegraph.dialects.graph.base`). ``GRAPH_OPS`` lists them all;
``graph.fused`` / ``graph.yield`` (:mod:`tilegraph.dialects.graph.fused`) hold fused groups.
``Graph`` is the xDSL dialect object.
"""

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.ir import Attribute, Dialect, Operation

from tilegraph.dialects.graph.attention import ATTENTION_OPS
from tilegraph.dialects.graph.base import GraphOp, ShapeError, constant_value
from tilegraph.dialects.graph.binary import BINARY_OPS
from tilegraph.dialects.graph.constant_ops import CONSTANT_OPS, ConstantOp
from tilegraph.dialects.graph.control_flow import CONTROL_FLOW_OPS
from tilegraph.dialects.graph.dense import DenseAttr
from tilegraph.dialects.graph.elementwise import ELEMENTWISE_OPS
from tilegraph.dialects.graph.facts import (
    ANY_FORMAT,
    FormatRole,
    FusionKind,
    KernelVariant,
    OpCost,
    OpFacts,
)
from tilegraph.dialects.graph.fused import FUSED_OPS, FusedOp, YieldOp
from tilegraph.dialects.graph.generators import GENERATOR_OPS
from tilegraph.dialects.graph.indexing import INDEXING_OPS
from tilegraph.dialects.graph.linalg import LINALG_OPS
from tilegraph.dialects.graph.logical import LOGICAL_OPS
from tilegraph.dialects.graph.losses import LOSS_OPS
from tilegraph.dialects.graph.math_ops import MATH_OPS
from tilegraph.dialects.graph.nn import NN_OPS
from tilegraph.dialects.graph.normalization import NORMALIZATION_OPS
from tilegraph.dialects.graph.pooling import POOLING_OPS
from tilegraph.dialects.graph.quantize import QUANTIZE_OPS
from tilegraph.dialects.graph.quantized_recurrent import QUANTIZED_RECURRENT_OPS
from tilegraph.dialects.graph.rearrange import REARRANGE_OPS
from tilegraph.dialects.graph.recurrent import RECURRENT_OPS
from tilegraph.dialects.graph.reduction import REDUCTION_OPS
from tilegraph.dialects.graph.rotary import ROTARY_OPS
from tilegraph.dialects.graph.sequence import SEQUENCE_OPS
from tilegraph.dialects.graph.shape_ops import SHAPE_OPS
from tilegraph.dialects.graph.signal import SIGNAL_OPS
from tilegraph.dialects.graph.spatial import SPATIAL_OPS
from tilegraph.dialects.graph.transformer_ops import TRANSFORMER_OPS
from tilegraph.dialects.graph.value_types import VALUE_TYPES, OptionalType, SequenceType
from tilegraph.dialects.graph.vision import VISION_OPS
from tilegraph.dialects.layout_type import TensorType

GRAPH_OPS: list[type[GraphOp]] = [
    *CONSTANT_OPS,
    *ELEMENTWISE_OPS,
    *BINARY_OPS,
    *LINALG_OPS,
    *NN_OPS,
    *NORMALIZATION_OPS,
    *POOLING_OPS,
    *SHAPE_OPS,
    *REDUCTION_OPS,
    *MATH_OPS,
    *LOGICAL_OPS,
    *GENERATOR_OPS,
    *REARRANGE_OPS,
    *QUANTIZE_OPS,
    *LOSS_OPS,
    *RECURRENT_OPS,
    *QUANTIZED_RECURRENT_OPS,
    *ATTENTION_OPS,
    *SPATIAL_OPS,
    *SIGNAL_OPS,
    *TRANSFORMER_OPS,
    *ROTARY_OPS,
    *INDEXING_OPS,
    *CONTROL_FLOW_OPS,
    *SEQUENCE_OPS,
    *VISION_OPS,
]


class _GraphConstantMaterializer(ConstantMaterializationInterface):
    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation | None:
        if isinstance(value, DenseAttr) and isinstance(type, TensorType):
            return ConstantOp.create(result_types=[type], properties={"value": value})
        return None


Graph = Dialect(
    "graph",
    [*GRAPH_OPS, *FUSED_OPS],
    [DenseAttr, *VALUE_TYPES],
    [_GraphConstantMaterializer()],
)


def op_class(name: str) -> type[GraphOp]:
    """The op class of a ``graph.*`` op name."""
    for cls in GRAPH_OPS:
        if cls.name == name:
            return cls
    raise KeyError(name)


__all__ = [
    "ANY_FORMAT",
    "GRAPH_OPS",
    "ConstantOp",
    "DenseAttr",
    "FormatRole",
    "FusedOp",
    "FusionKind",
    "Graph",
    "GraphOp",
    "KernelVariant",
    "OptionalType",
    "SequenceType",
    "OpCost",
    "OpFacts",
    "ShapeError",
    "YieldOp",
    "constant_value",
    "op_class",
]
