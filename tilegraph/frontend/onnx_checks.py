"""What the ONNX importer (:mod:`tilegraph.frontend.onnx_importer`) checks of a model
before it builds anything, and of a node's inputs while it does: each problem is one
located :class:`~tilegraph.frontend.onnx_errors.OnnxImportError`.

* :func:`read_onnx_model`: the file (or bytes) is an ONNX model;
* :func:`check_support`: every op type (also in subgraphs) is imported, none is excluded by
  design; all such nodes are listed at once;
* :func:`check_structure`: every node input is defined before it is used, every graph
  output produced;
* :func:`check_scan_version`: no Scan-8;
* :func:`check_inference_dropout`: Dropout's ``training_mode`` is a constant.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import onnx
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.base import constant_value
from tilegraph.frontend.external_data import check_external_data_files, check_no_external_data
from tilegraph.frontend.onnx_errors import OnnxImportError
from tilegraph.frontend.onnx_exclusions import exclusion_reason
from tilegraph.frontend.onnx_opsets import default_opset, ops_by_onnx_type
from tilegraph.frontend.onnx_subgraphs import all_nodes


def read_onnx_model(source: str | Path | bytes | onnx.ModelProto, where: str) -> onnx.ModelProto:
    """The model of a file, bytes or a ModelProto; OnnxImportError naming ``where`` for a
    missing file or one that is not an ONNX model."""
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        if isinstance(source, bytes):
            model = onnx.load_from_string(source)
            check_no_external_data(model, where)
            return model
        path = Path(source)
        if not path.is_file():
            raise OnnxImportError(f"{where}: no such file")
        model = onnx.load(str(path), load_external_data=False)
        check_external_data_files(model, path.parent, where)
        onnx.load_external_data_for_model(model, str(path.parent))
        return model
    except OnnxImportError:
        raise
    except Exception as e:  # protobuf's DecodeError and friends
        raise OnnxImportError(
            f"{where}: not a valid ONNX model ({e}); the file is corrupt or truncated, or "
            "not an ONNX model: export or download it again"
        ) from None


def check_support(graph: onnx.GraphProto, where: str) -> None:
    table = ops_by_onnx_type()
    excluded = [
        f"{n.op_type} (node '{n.name or '<unnamed>'}'): {reason}"
        for n in all_nodes(graph)
        if (reason := exclusion_reason(n.op_type, n.domain)) is not None
    ]
    if excluded:
        raise OnnxImportError(f"{where}: not supported by design: {'; '.join(excluded)}")
    missing = [
        f"{n.op_type} (node '{n.name or '<unnamed>'}')"
        for n in all_nodes(graph)
        if n.op_type not in table
    ]
    if missing:
        raise OnnxImportError(
            f"{where}: unsupported operators: {', '.join(missing)}"
            f" ({len(missing)} node{'s' if len(missing) != 1 else ''})"
        )


def check_scan_version(model: onnx.ModelProto, where: str) -> None:
    """Scan-8 (a batch axis and ``sequence_lens``) is not imported: its conversion to Scan-9
    changes what the inputs mean."""
    opset = default_opset(model)
    if opset is not None and opset < 9 and any(n.op_type == "Scan" for n in all_nodes(model.graph)):
        raise OnnxImportError(
            f"{where}: Scan-8 (opset {opset}: batched, with sequence_lens) is not supported; "
            "Scan-9 and later are"
        )


def check_structure(graph: onnx.GraphProto, where: str) -> None:
    """Every node input is defined before it is used; every graph output is produced."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    problems = []
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                problems.append(
                    f"node '{node.name or node.output[0]}' ({node.op_type}): input '{name}' "
                    "is not defined before the node"
                )
        defined.update(o for o in node.output if o)
    problems += [
        f"graph output '{o.name}' is never produced" for o in graph.output if o.name not in defined
    ]
    if problems:
        raise OnnxImportError(f"{where}: " + f"\n{where}: ".join(problems))


def check_inference_dropout(operands: Sequence[SSAValue | None], label: str) -> None:
    """tilegraph compiles for inference: Dropout's ``training_mode``, when given, must be a
    constant (``graph.dropout`` refuses a constant true), not a value known only at run time."""
    training = operands[2] if len(operands) > 2 else None
    if training is not None and constant_value(training) is None:
        raise OnnxImportError(
            f"{label}: input 'training_mode' is computed at run time; tilegraph compiles for "
            "inference only and needs it to be a constant false"
        )
