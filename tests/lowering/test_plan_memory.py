"""``plan-memory``: GM workspace planning of the host sequence, its checker, its bound.

* hand-built host sequences: which outputs take an input's place and which may not, the
  offsets, alignment, container sizes (GM bf16 in float32), the report (attribute,
  :func:`memory_report`, pass statistics), idempotence and the errors;
* the checker (:func:`check_memory_plan`) runs after every plan; deliberately broken plans
  (an offset edited onto a live buffer, an in-place pair shifted, a misaligned view) are
  caught, and running a broken plan gives wrong numbers (the executors really run on the
  planned workspace);
* random host sequences (hypothesis): the checker passes, both executors give the same
  outputs with the plan as without, and an exhaustive search over offsets finds no valid
  plan below the lower bound (validity as the checker decides it);
* the light models: peak <= 1.1 x lower bound, ResNet-50 >= 50 % below no reuse, the fast
  executor (and the interpreter on SqueezeNet) bit-identical with and without the plan.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i8
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import ParseError, VerifyException

from tilegraph.builder import GraphBuilder
from tilegraph.cost_model.tile_costs import cost_of
from tilegraph.dialects.layout_type import TensorType
from tilegraph.dialects.tile import AllocOp, ViewOp, scoped_memref
from tilegraph.frontend.light_models import LIGHT_MODELS, light_model
from tilegraph.hardware import hardware_preset
from tilegraph.lowering.transforms.plan_memory import (
    MEMORY_ATTR,
    MemoryPlanError,
    PlanMemoryPass,
    check_memory_plan,
    memory_report,
)
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.runtime.tiles import run_tiles

EXECUTORS = ("fast", "interpret")
ALIGN = 32


# ---- helpers ------------------------------------------------------------------------------


def plan(module: ModuleOp, **options) -> ModuleOp:
    """Run plan-memory in place, verify the module and check the plan."""
    PlanMemoryPass(**options).apply(make_context(), module)
    module.verify()
    check_memory_plan(module)
    return module


def host(module: ModuleOp) -> func.FuncOp:
    (fn,) = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.signature" in f.attributes
    ]
    return fn


def view_offsets(module: ModuleOp) -> dict[str, int]:
    return {
        op.result.name_hint or "?": op.byte_offset
        for op in host(module).body.block.ops
        if isinstance(op, ViewOp)
    }


def views(module: ModuleOp) -> dict[str, ViewOp]:
    return {op.result.name_hint or "?": op for op in host(module).walk() if isinstance(op, ViewOp)}


def move(view: ViewOp, offset: int) -> None:
    """Edit a view's offset (what a broken planner would do)."""
    view.properties["offset"] = IntegerAttr(offset, 64)


def signature_inputs(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    sig = host(module).attributes["tile.signature"]
    rng = np.random.default_rng(seed)
    shapes = [t.origin_shape for t in sig.inputs.data if isinstance(t, TensorType)]  # type: ignore[attr-defined]
    return [rng.standard_normal([int(d) for d in s]).astype(np.float32) for s in shapes]


def assert_same(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> None:
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def kernel(name: str, op: str, shapes: Sequence[str], out: str, extra: str = "") -> str:
    """A macro kernel: read each input, one graph op, write the output."""
    args = ", ".join(f'%in{i}: memref<{s}xf32, "GM">' for i, s in enumerate(shapes))
    reads = "\n".join(
        f'  %t{i} = tile.read %in{i} : memref<{s}xf32, "GM"> -> !layout.tensor<{s}xf32>'
        for i, s in enumerate(shapes)
    )
    operands = ", ".join(f"%t{i}" for i in range(len(shapes)))
    in_types = ", ".join(f"!layout.tensor<{s}xf32>" for s in shapes)
    return (
        f'func.func @{name}({args}, %out: memref<{out}xf32, "GM">) attributes '
        f'{{tile.kernel = "vector"}} {{\n{reads}\n'
        f"  %r = graph.{op} {operands} {extra}: ({in_types}) -> !layout.tensor<{out}xf32>\n"
        f'  tile.write %r to %out : !layout.tensor<{out}xf32> to memref<{out}xf32, "GM">\n'
        "  func.return\n}\n"
    )


def host_text(
    args: Sequence[tuple[str, str]], results: Sequence[tuple[str, str]], body: str
) -> str:
    params = ", ".join(f'%{n}: memref<{s}xf32, "GM">' for n, s in args)
    memrefs = ", ".join(f'memref<{s}xf32, "GM">' for _, s in results)
    tensors = ", ".join(f"!layout.tensor<{s}xf32>" for _, s in results)
    arg_tensors = ", ".join(f"!layout.tensor<{s}xf32>" for _, s in args)
    names = ", ".join(f"%{n}" for n, _ in results)
    return (
        f"func.func @main({params}) -> ({memrefs}) attributes {{tile.signature = "
        f"({arg_tensors}) -> ({tensors})}} {{\n{body}\n  func.return {names} : {memrefs}\n}}\n"
    )


# The sequence of tests/filecheck/lowering/plan_memory.mlir, with a neg for the bias add:
# 4x8 / 8x4 f32 = 128 B, 3x5 f32 = 60 B (64 aligned). The figures are worked out by hand
# in that file.
HAND = host_text(
    [("x", "4x8"), ("y", "3x5")],
    [("e", "4x8"), ("m", "3x5")],
    """
  %a = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @exp(%x, %a) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
  %b = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @relu(%a, %b) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
  %c = tile.alloc : memref<8x4xf32, "GM">
  tile.launch @transpose(%b, %c) : memref<4x8xf32, "GM">, memref<8x4xf32, "GM">
  %d = tile.alloc : memref<8x4xf32, "GM">
  tile.launch @neg8(%c, %d) : memref<8x4xf32, "GM">, memref<8x4xf32, "GM">
  %e = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @transpose_back(%d, %e) : memref<8x4xf32, "GM">, memref<4x8xf32, "GM">
  %s = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @sigmoid(%y, %s) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
  %n = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @neg(%s, %n) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">
  %m = tile.alloc : memref<3x5xf32, "GM">
  tile.launch @mul(%s, %n, %m) : memref<3x5xf32, "GM">, memref<3x5xf32, "GM">, memref<3x5xf32, "GM">""",
) + "".join(
    [
        kernel("exp", "exp", ["4x8"], "4x8"),
        kernel("relu", "relu", ["4x8"], "4x8"),
        kernel("transpose", "transpose", ["4x8"], "8x4", "{perm = [1, 0]} "),
        kernel("neg8", "neg", ["8x4"], "8x4"),
        kernel("transpose_back", "transpose", ["8x4"], "4x8", "{perm = [1, 0]} "),
        kernel("sigmoid", "sigmoid", ["3x5"], "3x5"),
        kernel("neg", "neg", ["3x5"], "3x5"),
        kernel("mul", "mul", ["3x5", "3x5"], "3x5"),
    ]
)


# ---- hand-built sequences -----------------------------------------------------------------


def test_hand_built_plan_reuses_and_writes_in_place():
    module = plan(parse_mlir(HAND))
    at = view_offsets(module)
    assert at["b"] == at["a"]  # relu over exp's result, which dies there
    assert at["d"] == at["c"]  # neg over the transpose's result
    assert at["m"] == at["s"]  # mul over the first dying input of its type
    assert at["n"] != at["s"]  # %s is read again by mul: neg may not write over it
    assert at["c"] != at["b"]  # the transpose is not elementwise
    assert all(offset % ALIGN == 0 for offset in at.values())
    report = memory_report(module)
    # live bytes per point (pairs once): 128 128 256 128 256 192 256 256 192
    assert report.lower_bound == 256
    assert report.peak == 256
    assert report.no_reuse == 5 * 128 + 3 * 64
    assert report.in_place == 3
    assert report.buffers == 8
    assert report.arguments == 128 + 64
    (workspace,) = [op for op in host(module).body.block.ops if isinstance(op, AllocOp)]
    assert workspace is host(module).body.block.first_op
    assert list(workspace.result.type.get_shape()) == [256]  # type: ignore[attr-defined]


def test_without_in_place_pairs_take_separate_places():
    module = plan(parse_mlir(HAND), in_place=False)
    at = view_offsets(module)
    assert at["b"] != at["a"] and at["d"] != at["c"] and at["m"] not in (at["s"], at["n"])
    report = memory_report(module)
    assert report.in_place == 0
    # points #6 and #7 hold %e (128 B) and three 64 B buffers
    assert report.lower_bound == report.peak == 320


@pytest.mark.parametrize("executor", EXECUTORS)
def test_hand_built_plan_runs_the_same(executor):
    module = parse_mlir(HAND)
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor=executor)
    got = run_tiles(plan(module), inputs, executor=executor)
    assert_same(got, want)
    x, y = inputs
    np.testing.assert_allclose(got[0], -np.maximum(np.exp(x), 0), rtol=1e-6)
    s = 1 / (1 + np.exp(-y))
    np.testing.assert_allclose(got[1], s * -s, rtol=1e-6)


def test_in_place_is_refused_for_arguments_returned_and_opaque_inputs():
    text = host_text(
        [("x", "4x8")],
        [("a", "4x8"), ("c", "4x8")],
        """
  %a = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @neg(%x, %a) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
  %b = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @neg(%a, %b) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">
  %c = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @softmax(%b, %c) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">""",
    ) + "".join(
        [
            kernel("neg", "neg", ["4x8"], "4x8"),
            kernel("softmax", "softmax", ["4x8"], "4x8", "{axis = 1 : i64} "),
        ]
    )
    module = plan(parse_mlir(text))
    at = view_offsets(module)
    # %a (from the argument %x: never written over) is returned: %b may not take its place;
    # softmax keeps %b's type but is not elementwise: %c may not take %b's place.
    assert len({at["a"], at["b"], at["c"]}) == 3
    assert memory_report(module).in_place == 0


def test_gm_bf16_takes_float32_containers():
    text = (
        'func.func @main(%x: memref<4x8xbf16, "GM">) -> memref<4x8xbf16, "GM"> attributes '
        "{tile.signature = (!layout.tensor<4x8xbf16>) -> !layout.tensor<4x8xbf16>} {\n"
        '  %a = tile.alloc : memref<4x8xbf16, "GM">\n'
        '  tile.launch @neg(%x, %a) : memref<4x8xbf16, "GM">, memref<4x8xbf16, "GM">\n'
        '  func.return %a : memref<4x8xbf16, "GM">\n}\n'
    ) + kernel("neg", "neg", ["4x8"], "4x8").replace("f32", "bf16")
    module = plan(parse_mlir(text))
    assert memory_report(module).peak == 4 * 8 * 4  # 4 B per element, as executors hold it
    x = signature_inputs(module)[0].astype(ml_dtypes.bfloat16)
    (got,) = run_tiles(module, [x], executor="fast")
    assert got.dtype == ml_dtypes.bfloat16  # held in float32 inside, bfloat16 at the interface
    np.testing.assert_array_equal(got, -x)


def test_report_attribute_statistics_and_idempotence():
    module = parse_mlir(HAND)
    predicted = memory_report(module)  # the plan it would make; the module is unchanged
    assert not any(isinstance(op, ViewOp) for op in module.walk())
    with collecting_statistics() as collector:
        run_pipeline("plan-memory", make_context(), module)
    recorded = memory_report(module)
    assert recorded == predicted
    attribute = host(module).attributes[MEMORY_ATTR]
    assert attribute.data["peak"].value.data == recorded.peak  # type: ignore[attr-defined]
    assert recorded.as_dict().keys() >= {"peak", "lower_bound", "no_reuse", "constants"}
    stats = collector.as_dict()["plan-memory"]
    assert stats["peak-bytes"] == recorded.peak
    assert stats["lower-bound-bytes"] == recorded.lower_bound
    assert stats["no-reuse-bytes"] == recorded.no_reuse
    assert stats["in-place"] == recorded.in_place
    text = str(module)
    plan(module)
    assert str(module) == text


def test_constants_are_a_region_apart():
    text = host_text(
        [("x", "4x8")],
        [("a", "4x8")],
        """
  %w = tile.constant <f32, [4, 8], __elided__> : memref<4x8xf32, "GM">
  %k = tile.constant <f32, [3], [1.0, 2.0, 3.0]> : memref<3xf32, "GM">
  %a = tile.alloc : memref<4x8xf32, "GM">
  tile.launch @add(%x, %w, %a) : memref<4x8xf32, "GM">, memref<4x8xf32, "GM">, memref<4x8xf32, "GM">""",
    ) + kernel("add", "add", ["4x8", "4x8"], "4x8")
    report = memory_report(plan(parse_mlir(text)))
    assert report.constants == 128 + 32  # 12 B rounded up to the alignment
    assert report.peak == report.no_reuse == 128


def test_errors_name_the_problem():
    graph_level = parse_mlir(
        "func.func @main(%x: !layout.tensor<4xf32>) -> !layout.tensor<4xf32> {\n"
        "  %y = graph.relu %x : !layout.tensor<4xf32>\n"
        "  func.return %y : !layout.tensor<4xf32>\n}\n"
    )
    with pytest.raises(MemoryPlanError, match="no lowered host function.*lower-graph-to-kernels"):
        PlanMemoryPass().apply(make_context(), graph_level)
    with pytest.raises(MemoryPlanError, match="no lowered host function"):
        memory_report(graph_level)
    with pytest.raises(MemoryPlanError, match="no lowered host function @other"):
        memory_report(parse_mlir(HAND), "other")
    broken = parse_mlir(HAND)
    host(broken).attributes[MEMORY_ATTR] = StringAttr("nonsense")
    with pytest.raises(MemoryPlanError, match="malformed tile.memory"):
        memory_report(broken)


# ---- tile.view ----------------------------------------------------------------------------


def test_view_is_a_view_of_the_workspace():
    module = plan(parse_mlir(HAND))
    a = views(module)["a"]
    workspace = np.zeros(256, np.int8)
    (array,) = kernel_of(a)(workspace)
    assert array.shape == (4, 8) and array.dtype == np.float32
    assert np.shares_memory(array, workspace)
    array[...] = 1.0
    assert workspace[: 4 * 8 * 4].view(np.float32).tolist() == [1.0] * 32
    assert cost_of(a, hardware_preset("ascend910b")) == 1 and a.pipe() == "S"


def test_view_parser_checks_the_workspace_type():
    text = (
        'func.func @f() {\n  %ws = tile.alloc : memref<64xi8, "GM">\n'
        '  %v = tile.view %ws[0] : memref<128xi8, "GM"> to memref<4xf32, "GM">\n'
        "  func.return\n}\n"
    )
    with pytest.raises(ParseError, match="memref<64xi8"):
        parse_mlir(text)


def test_view_verifier_uses_the_module_preset():
    module = plan(parse_mlir(HAND))
    move(views(module)["n"], 208)  # 16 B past a 32 B boundary
    with pytest.raises(VerifyException, match="not a multiple of the GM alignment"):
        module.verify()


# ---- the checker --------------------------------------------------------------------------


def _tiled_chain() -> ModuleOp:
    """exp, relu, transpose, sigmoid on 40x64 f32, tiled for the test preset (5-6 tiles)."""
    b = GraphBuilder("main")
    x = b.input("x", [40, 64])
    a = b.op("exp", x, name="a")
    r = b.op("relu", a, name="b")
    c = b.op("transpose", r, perm=[1, 0], name="c")
    module = b.build(b.op("sigmoid", c, name="d"))
    run_pipeline(
        "set-target{platform=test},lower-graph-to-kernels,tile-kernels", make_context(), module
    )
    return module


def test_tiled_in_place_runs_the_same_with_both_executors():
    module = _tiled_chain()
    inputs = signature_inputs(module)
    want = {e: run_tiles(module, inputs, executor=e) for e in EXECUTORS}
    plan(module)
    at = view_offsets(module)
    assert at["b"] == at["a"] and at["d"] == at["c"] != at["b"]
    for executor in EXECUTORS:
        assert_same(run_tiles(module, inputs, executor=executor), want[executor])


def test_checker_catches_an_offset_moved_onto_a_live_buffer():
    module = plan(_tiled_chain())
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor="interpret")
    move(views(module)["c"], views(module)["b"].byte_offset)  # the transpose over its input
    with pytest.raises(MemoryPlanError) as caught:
        check_memory_plan(module)
    message = str(caught.value)
    assert "%b [0, 10240) and %c [0, 10240) overlap" in message
    assert "launch #2 (@transpose" in message
    # the executors run on the planned memory: tile by tile, the transpose overwrites rows
    # of its input that later tiles still read
    got = run_tiles(module, inputs, executor="interpret")
    assert not np.allclose(got[0], want[0])


def test_checker_catches_a_shifted_in_place_pair():
    module = plan(parse_mlir(HAND))
    move(views(module)["b"], views(module)["a"].byte_offset + ALIGN)  # overlaps, not equal
    with pytest.raises(
        MemoryPlanError, match=r"%a \[0, 128\) and %b \[32, 160\).*launch #1 \(@relu\)"
    ):
        check_memory_plan(module)


def test_checker_catches_returned_buffers_sharing_memory():
    module = plan(parse_mlir(HAND))
    move(views(module)["m"], views(module)["e"].byte_offset)
    move(views(module)["s"], views(module)["e"].byte_offset)
    with pytest.raises(MemoryPlanError, match=r"%e \[0, 128\) and %s \[0, 60\).*launch #5"):
        check_memory_plan(module)


def test_checker_catches_a_view_outside_its_workspace_or_misaligned():
    module = plan(parse_mlir(HAND))
    move(views(module)["n"], 224)  # 60 B from 224 ends past 256
    with pytest.raises(MemoryPlanError, match=r"%n at \[224, 284\) is outside its 256 B"):
        check_memory_plan(module)
    move(views(module)["n"], 200)
    with pytest.raises(MemoryPlanError, match=r"%n at \[200, 260\) is not aligned to 32 B"):
        check_memory_plan(module)


# ---- random host sequences ----------------------------------------------------------------

SHAPES = ([8, 1], [8, 2], [8, 3])  # 32, 64, 96 B; transposes make 1x8, 2x8, 3x8


class Printed:
    """A drawn module whose repr is its host function (readable falsifying examples)."""

    def __init__(self, module: ModuleOp):
        self.module = module

    def __repr__(self) -> str:
        return f"<\n{host(self.module)}\n>"


@st.composite
def host_sequences(draw, max_ops: int = 5) -> Printed:
    """A graph of lone ops (each its own kernel): elementwise unary and binary ops,
    softmax (same type, not elementwise) and transposes; some results returned."""
    b = GraphBuilder("main")
    values: list[SSAValue] = [b.input("x", draw(st.sampled_from(SHAPES)))]
    for i in range(draw(st.integers(2, max_ops))):
        a = draw(st.sampled_from(values))
        kind = draw(st.sampled_from(["neg", "relu", "add", "softmax", "transpose"]))
        name = f"v{i}"
        if kind == "add":
            same = [v for v in values if v.type == a.type]
            values.append(b.op("add", a, draw(st.sampled_from(same)), name=name))
        elif kind == "softmax":
            values.append(b.op("softmax", a, axis=1, name=name))
        elif kind == "transpose":
            values.append(b.op("transpose", a, perm=[1, 0], name=name))
        else:
            values.append(b.op(kind, a, name=name))
    produced = values[1:]
    extra = (
        draw(st.lists(st.sampled_from(produced[:-1]), unique=True, max_size=2))
        if len(produced) > 1
        else []
    )
    module = b.build(produced[-1], *extra)
    run_pipeline("lower-graph-to-kernels", make_context(), module)
    return Printed(module)


@settings(max_examples=40)
@given(host_sequences())
def test_random_sequences_plan_checks_and_runs_the_same(drawn):
    module = drawn.module
    inputs = signature_inputs(module)
    want = {e: run_tiles(module, inputs, executor=e) for e in EXECUTORS}
    plan(module)
    report = memory_report(module)
    assert report.lower_bound <= report.peak <= report.no_reuse
    for executor in EXECUTORS:
        assert_same(run_tiles(module, inputs, executor=executor), want[executor])


def _pair_rules(module: ModuleOp, names: list[str]) -> tuple[list[int], dict, dict]:
    """Aligned sizes, and for each pair whether the checker lets them coincide and
    overlap partially, probed with every other view far away."""
    vs = views(module)
    sizes = [-(-vs[n].byte_size // ALIGN) * ALIGN for n in names]
    spacing = 2 * max(sizes) + 2 * ALIGN
    old = vs[names[0]].workspace.owner
    assert isinstance(old, AllocOp)
    larger = AllocOp(scoped_memref([spacing * (len(names) + 1)], i8, "GM"))  # room for probes
    old.parent_block().insert_op_before(larger, old)  # type: ignore[union-attr]
    old.result.replace_all_uses_with(larger.result)
    old.detach()
    old.erase()

    def valid(offsets: dict[str, int]) -> bool:
        for i, n in enumerate(names):
            move(vs[n], offsets.get(n, i * spacing))
        try:
            check_memory_plan(module)
        except MemoryPlanError:
            return False
        return True

    coincide, partial = {}, {}
    for i, p in enumerate(names):
        for j, q in enumerate(names[i + 1 :], start=i + 1):
            coincide[i, j] = valid({q: i * spacing})
            if sizes[i] > ALIGN:
                partial[i, j] = valid({q: i * spacing + ALIGN})
            elif sizes[j] > ALIGN:
                partial[i, j] = valid({p: j * spacing + ALIGN})
            else:
                partial[i, j] = coincide[i, j]  # two 32 B buffers only overlap by coinciding
    return sizes, coincide, partial


def _fits_below(sizes: list[int], coincide: dict, partial: dict, limit: int) -> bool:
    """Whether offsets exist with every buffer ending at or below ``limit`` and every
    overlapping pair allowed (exhaustive search)."""
    offsets: list[int] = []

    def allowed(i: int, j: int) -> bool:
        a, b = offsets[i], offsets[j]
        if a + sizes[i] <= b or b + sizes[j] <= a:
            return True
        return coincide[i, j] if a == b else partial[i, j]

    def search(k: int) -> bool:
        if k == len(sizes):
            return True
        for offset in range(0, limit - sizes[k] + 1, ALIGN):
            offsets.append(offset)
            if all(allowed(i, k) for i in range(k)) and search(k + 1):
                return True
            offsets.pop()
        return False

    return search(0)


@settings(max_examples=25)
@given(host_sequences(max_ops=5))
def test_no_valid_plan_is_below_the_lower_bound(drawn):
    """The lower bound is a bound for every plan the checker accepts, not only ours."""
    module = drawn.module
    plan(module)
    report = memory_report(module)
    names = sorted(views(module))
    if len(names) < 2:
        return
    sizes, coincide, partial = _pair_rules(module, names)
    assert not _fits_below(sizes, coincide, partial, report.lower_bound - ALIGN)
    assert _fits_below(sizes, coincide, partial, report.peak)  # ours is one of them


# ---- the light models ---------------------------------------------------------------------

_FAST_MODELS = ("squeezenet", "resnet50", "shufflenet")
LIGHT_CASES = [
    pytest.param(name) if name in _FAST_MODELS else pytest.param(name, marks=pytest.mark.slow)
    for name in LIGHT_MODELS
]


@pytest.mark.parametrize("name", LIGHT_CASES)
def test_light_model_plan(name):
    """Peak within 1.1x of the lower bound, the checker passes, and the fast executor
    gives bit-identical outputs on the planned workspace."""
    import tilegraph

    module = tilegraph.compile(light_model(name, seed=0), executor="fast").module
    inputs = signature_inputs(module, seed=1)
    want = run_tiles(module, inputs, executor="fast")
    report = memory_report(plan(module))
    assert report.lower_bound <= report.peak <= 1.1 * report.lower_bound, report
    assert report.peak < report.no_reuse and report.constants > 0
    if name == "resnet50":
        assert report.peak <= 0.5 * report.no_reuse, report
    assert_same(run_tiles(module, inputs, executor="fast"), want)


def test_light_model_plan_with_the_interpreter():
    import tilegraph

    module = tilegraph.compile(light_model("squeezenet", seed=0), executor="interpret").module
    inputs = signature_inputs(module, seed=1)
    want = run_tiles(module, inputs, executor="interpret")
    assert_same(run_tiles(plan(module), inputs, executor="interpret"), want)
