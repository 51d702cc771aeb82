"""The ONNX backend *node* test suite, run through ``load_onnx`` + ``run_reference``.

``onnx.backend.test.case.node.collect_testcases`` generates the suite (one single-node model,
or a function-expanded graph, per case, with inputs and expected outputs) from the installed
onnx package. :func:`run_case` classifies one case:

* ``passed`` — imported, ran on the data set's arrays as they are (bfloat16, int4, float8
  ... as ``ml_dtypes`` arrays), and every output matches in shape, element type and value
  (``np.testing.assert_allclose`` with the case's own ``rtol``/``atol``, 1e-3 / 1e-7 unless the
  case says otherwise — exactly what onnx's backend runner does, bfloat16 widened to two ULPs);
* ``refused`` — ``load_onnx`` raised :class:`OnnxImportError` (a clear, located refusal)
  and importing bound to the first data set's inputs (static shapes, Ifs on input values
  specialised: what ``tilegraph-run`` and a Session do, :mod:`tilegraph.runtime.binding`)
  fails as well; a case that imports bound runs bound to each data set's inputs;
* ``failed`` — anything else: a wrong number, shape or dtype, or any other exception.

Shared by ``tests/conformance/test_onnx_node_suite.py`` and ``benchmarks/onnx_node_suite.py``.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal, cast

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.test_case import TestCase
from xdsl.dialects.builtin import ModuleOp

from tilegraph.formats import is_ml_dtypes
from tilegraph.frontend.onnx_importer import OnnxImportError, load_onnx

Outcome = Literal["passed", "refused", "failed"]


@cache
def node_cases() -> tuple[TestCase, ...]:
    """Every node test case of the installed onnx, in onnx's order (generated once: ~5 s)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # the generators overflow casts on purpose
        return tuple(collect_testcases(None))


def case_model(case: TestCase) -> onnx.ModelProto:
    """The case's model (node cases always carry one; model-zoo cases would not)."""
    if case.model is None:
        raise ValueError(f"{case.name}: the test case has no model")
    return case.model


def case_opset(case: TestCase) -> int:
    """The default-domain opset the case's model imports (0 if none)."""
    imports = case_model(case).opset_import
    return next((o.version for o in imports if o.domain in ("", "ai.onnx")), 0)


_EXPANDED = re.compile(r"_expanded(_ver\d+)?$")


@cache
def _op_of_case_name() -> dict[str, str]:
    graphs = {c.name: case_model(c).graph for c in node_cases()}
    return {name: g.node[0].op_type for name, g in graphs.items() if g.node}


def case_op(case: TestCase) -> str:
    """The op type a case tests: its node's, or ``<Op> (expanded)`` for the function-expanded
    twin of a case (whose graph is the op's function body)."""
    base = _EXPANDED.sub("", case.name)
    if base != case.name:
        op = _op_of_case_name().get(base)
        return f"{op} (expanded)" if op else "(expanded)"
    nodes = case_model(case).graph.node
    return nodes[0].op_type if nodes else "(empty)"


@dataclass(frozen=True)
class CaseResult:
    name: str
    op: str
    opset: int
    outcome: Outcome
    message: str = ""
    """The refusal or failure, one line."""


def _result(case: TestCase, outcome: Outcome, message: str = "") -> CaseResult:
    return CaseResult(case.name, case_op(case), case_opset(case), outcome, message)


def _judged(
    case: TestCase,
    run: Callable[[list[object]], Sequence[object]],
    on_error: Callable[[str], Outcome] = lambda message: "failed",
) -> CaseResult:
    """``run`` (the data set's inputs -> outputs) on each data set of the case, compared with
    the expected outputs; an exception while running is judged by ``on_error``."""
    for index, (raw_inputs, raw_expected) in enumerate(case.data_sets or ()):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                outputs = run(_arrays(raw_inputs))
        except Exception as e:
            message = f"data set {index}: {type(e).__name__}: {_one_line(e)}"
            return _result(case, on_error(message), message)
        problem = compare_outputs(outputs, _arrays(raw_expected), rtol=case.rtol, atol=case.atol)
        if problem:
            return _result(case, "failed", f"data set {index}: {problem}")
    return _result(case, "passed")


def run_case(case: TestCase) -> CaseResult:
    """Import and run one case on each of its data sets; see the module docstring."""
    model = case_model(case)
    from tilegraph.runtime import run_reference
    from tilegraph.runtime.binding import import_bound

    initialized = {t.name for t in model.graph.initializer}
    names = [vi.name for vi in model.graph.input if vi.name not in initialized]

    def named(inputs: list[object]) -> dict[str, np.ndarray]:
        return dict(zip(names, cast(list[np.ndarray], inputs), strict=True))

    module: ModuleOp | None = None
    try:
        module = load_onnx(model, name=case.name)
    except OnnxImportError as e:
        # what tilegraph-run and a Session do: import bound to the inputs (static shapes,
        # Ifs on input values specialised); refused when that does not import either
        first = case.data_sets[0][0] if case.data_sets else None
        try:
            if first is None:
                raise
            import_bound(model, named(_arrays(first)), static=True)
        except OnnxImportError:
            return _result(case, "refused", str(e))
    except Exception as e:  # a crash of the importer is a failure, not a refusal
        return _result(case, "failed", f"import crashed: {type(e).__name__}: {e}")

    def run(inputs: list[object]) -> Sequence[object]:
        arrays = named(inputs)
        if module is None:
            return run_reference(import_bound(model, arrays, static=True).module, arrays)
        return run_reference(module, arrays)

    return _judged(case, run)


def run_case_onnxruntime(case: TestCase) -> CaseResult:
    """The same case through onnxruntime, judged the same way: ``refused`` when onnxruntime
    cannot load the model (an op, type or opset it lacks) or its Python binding cannot
    exchange an element type with numpy, ``failed`` on a wrong output or another error while
    running. The peer figure of the benchmark."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(
            case_model(case).SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as e:
        return _result(case, "refused", _one_line(e))
    names = [i.name for i in session.get_inputs()]

    def run(inputs: list[object]) -> list[object]:
        return list(session.run(None, dict(zip(names, inputs, strict=False))))

    def on_error(message: str) -> Outcome:
        # its Python binding cannot hand these element types to or from numpy
        return "refused" if "Numpy type" in message or "MLDataType" in message else "failed"

    return _judged(case, run, on_error)


def _arrays(values: Sequence[object]) -> list[object]:
    """Data-set entries as numpy (some generators store ``TensorProto``s, e.g. Cast)."""
    out: list[object] = []
    for v in values:
        if isinstance(v, onnx.TensorProto):
            out.append(numpy_helper.to_array(v))
        elif isinstance(v, np.generic):
            out.append(np.asarray(v))
        else:
            out.append(v)
    return out


def compare_outputs(
    outputs: Sequence[object], expected: Sequence[object], *, rtol: float, atol: float
) -> str:
    """The first mismatch as one line ('' when all match), judged as onnx's runner does:
    tensors, sequences (lists) and optionals (None or a value)."""
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, expected {len(expected)}"
    for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        problem = _compare_value(i, got, want, rtol=rtol, atol=atol)
        if problem:
            return problem
    return ""


def _compare_value(i: int, got: object, want: object, *, rtol: float, atol: float) -> str:
    """One output: a tensor, a sequence (list) of tensors, or an optional (None or value)."""
    if want is None or got is None:
        return "" if want is None and got is None else f"output {i}: {got!r}, expected {want!r}"
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"output {i}: expected a sequence of {len(want)} tensors"
        for g, w in zip(got, want, strict=True):
            problem = _compare_value(i, g, w, rtol=rtol, atol=atol)
            if problem:
                return problem
        return ""
    if not isinstance(want, np.ndarray):
        return f"output {i}: expected a {type(want).__name__}, not a tensor"
    got = np.asarray(got)
    if got.shape != want.shape:
        return f"output {i}: shape {got.shape}, expected {want.shape}"
    if want.dtype == object:
        return "" if np.array_equal(got, want) else f"output {i}: values differ"
    if got.dtype != want.dtype:
        return f"output {i}: dtype {got.dtype}, expected {want.dtype}"
    # onnx's runner: bfloat16 results are compared with two bfloat16 ULPs
    tolerance = max(rtol, 2**-6) if want.dtype.name == "bfloat16" else rtol
    if is_ml_dtypes(want.dtype):  # compare the values (exact in float64)
        got, want = got.astype(np.float64), want.astype(np.float64)
    try:
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=atol)
    except AssertionError as e:
        lines = [line for line in str(e).splitlines() if "Mismatched" in line]
        return f"output {i}: values differ ({lines[0].strip() if lines else 'mismatch'})"
    return ""


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else ""


_LOCATION = re.compile(r"^\S+: (node '[^']*' \([^)]*\): )?")
_NODE_NAMES = re.compile(r" \(node '[^']*'\)| \(\d+ nodes?\)$")
_VOLATILE = re.compile(r"'[^']*'|\d+")


def reason_group(message: str, words: int = 6) -> str:
    """A grouping key for a refusal or failure: its first words, without the location prefix
    (``<case>: node 'n' (Op):``) and node names, quoted names and numbers masked so that
    like reasons group (``unsupported operators: Resize``, ``unsupported ONNX data type _``)."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    text = _NODE_NAMES.sub("", _LOCATION.sub("", first))
    text = _VOLATILE.sub("_", text)
    return " ".join(text.split()[:words])


REFUSALS_FILE = Path(__file__).resolve().with_name("node_refusals.json")
"""The reviewed list of refused node cases: case name -> reason (see :func:`refusal_reason`)."""


def refusal_reason(result: CaseResult) -> str:
    """The refusal's first line without the case name that every message starts with."""
    first = result.message.strip().splitlines()[0] if result.message.strip() else ""
    prefix = f"{result.name}: "
    return first[len(prefix) :] if first.startswith(prefix) else first


def load_refusals(path: Path = REFUSALS_FILE) -> dict[str, str]:
    """The reviewed refusals (empty when the file does not exist)."""
    return json.loads(path.read_text()) if path.exists() else {}


def write_refusals(results: Sequence[CaseResult], path: Path = REFUSALS_FILE) -> int:
    """Write every refused case of ``results`` with its reason; returns how many."""
    refused = {r.name: refusal_reason(r) for r in results if r.outcome == "refused"}
    path.write_text(json.dumps(dict(sorted(refused.items())), indent=1) + "\n")
    return len(refused)


def onnx_version() -> str:
    return f"onnx {onnx.__version__} (opsets up to {onnx.defs.onnx_opset_version()})"
