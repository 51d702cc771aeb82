"""``place-concat``: a concat whose inputs are contiguous runs of its output runs no
kernel; its producers write into the output through ``tile.slice_view``.

* the op: its verifier, and its semantics (a numpy view: a write through it lands in the
  source);
* the kernel test (:func:`concat_regions`): row-major and C0-aligned NC1HWC0 regions,
  contiguous (batch 1) or strided (batch > 1), whole 32 B blocks or not, a C off the C0
  grid refused;
* small graphs through the whole lowering pipeline (O1 NCHW and O2 NC1HWC0 on ascend910b,
  batch 1 and 3, an input read by a second kernel): both executors match the graph level,
  the plan is proved by ``check_memory_plan``, and a placed concat is one launch fewer
  than without the pass, in the IR and in the cycle model;
* the host sequence of ``tests/filecheck/lowering/place_concat.mlir`` (a concat of
  concats, a reader after the concat, each refusal): the same outputs before the pass,
  after it and after ``plan-memory``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StridedLayoutAttr, f32
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from tests.lowering.test_plan_memory import assert_same, signature_inputs
from tests.lowering.test_tile_differential import Graph
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.dialects.tile import LaunchOp, SliceViewOp, StridedViewOp, scoped_memref
from tilegraph.lowering.transforms.place_concat import Regions, concat_regions
from tilegraph.lowering.transforms.plan_memory import check_memory_plan
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.passes.statistics import collecting_statistics
from tilegraph.runtime import run_reference
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.runtime.tiles import run_tiles

EXECUTORS = ("fast", "interpret")
LIT = Path(__file__).parents[1] / "filecheck" / "lowering" / "place_concat.mlir"


def launches(module: ModuleOp) -> list[str]:
    return [op.callee.string_value() for op in module.walk() if isinstance(op, LaunchOp)]


def slices(module: ModuleOp) -> list[SliceViewOp]:
    return [op for op in module.walk() if isinstance(op, SliceViewOp)]


def strided_views(module: ModuleOp) -> list[StridedViewOp]:
    """The host's strided views (a kernel's own, of a matmul operand, are not counted)."""
    hosts = [
        f for f in module.ops if isinstance(f, func.FuncOp) and "tile.signature" in f.attributes
    ]
    return [op for f in hosts for op in f.body.block.ops if isinstance(op, StridedViewOp)]


# ---- the op ---------------------------------------------------------------------------------


def _slice_module(src: MemRefType, offset: int, view: MemRefType) -> ModuleOp:
    fn = func.FuncOp("f", ((src,), ()))
    op = SliceViewOp(fn.body.block.args[0], offset, view)
    fn.body.block.add_ops([op, func.ReturnOp()])
    return ModuleOp([fn])


@pytest.mark.parametrize(
    ("offset", "view", "message"),
    [
        (41, scoped_memref([1, 2, 4], f32, "GM"), r"elements \[41, 49\) of a 48-element"),
        (-1, scoped_memref([1, 2, 4], f32, "GM"), "elements"),
        (0, scoped_memref([1, 2, 4], f32, "UB"), "GM buffers"),
        (
            0,
            MemRefType(
                f32,
                [1, 2, 4],
                StridedLayoutAttr([24, 4, 1], 0),
                scoped_memref([1], f32, "GM").memory_space,
            ),
            "row-major",
        ),
    ],
)
def test_verifier_rejects_a_view_that_is_no_run_of_the_source(offset, view, message):
    module = _slice_module(scoped_memref([1, 6, 8], f32, "GM"), offset, view)
    with pytest.raises(VerifyException, match=message):
        module.verify()


def test_slice_is_a_view_of_the_source():
    module = _slice_module(
        scoped_memref([1, 6, 4], f32, "GM"), 8, scoped_memref([1, 2, 4], f32, "GM")
    )
    module.verify()
    (op,) = slices(module)
    src = np.zeros((1, 6, 4), np.float32)
    (view,) = kernel_of(op)(src)
    view[...] = np.arange(8, dtype=np.float32).reshape(1, 2, 4)  # a producer's write
    np.testing.assert_array_equal(src[0, 2:4], np.arange(8).reshape(2, 4))
    assert not src[0, :2].any() and not src[0, 4:].any()


# ---- the kernel test ------------------------------------------------------------------------


def _concat_kernel(inputs: Sequence[tuple[str, str]], out: tuple[str, str]) -> func.FuncOp:
    """A concat kernel on axis 1: (memref shape, tensor type body) per input and output."""
    args = ", ".join(f'%i{k}: memref<{m}xf32, "GM">' for k, (m, _) in enumerate(inputs))
    reads = "".join(
        f'  %t{k} = tile.read %i{k} : memref<{m}xf32, "GM"> -> !layout.tensor<{t}>\n'
        for k, (m, t) in enumerate(inputs)
    )
    names = ", ".join(f"%t{k}" for k in range(len(inputs)))
    types = ", ".join(f"!layout.tensor<{t}>" for _, t in inputs)
    text = (
        f'func.func @cat({args}, %out: memref<{out[0]}xf32, "GM">) attributes '
        f'{{tile.kernel = "vector"}} {{\n{reads}'
        f"  %c = graph.concat {names} {{axis = 1}} : ({types}) -> !layout.tensor<{out[1]}>\n"
    )
    return _kernel_ending(text, out[0], out[1])


def _kernel_ending(text: str, memref: str, tensor: str) -> func.FuncOp:
    """The kernel ``text`` (its signature and body up to the concat ``%c``) ended by the
    write of ``%c`` to ``%out`` and the return, parsed."""
    text += (
        f'  tile.write %c to %out : !layout.tensor<{tensor}> to memref<{memref}xf32, "GM">\n'
        "  func.return\n}\n"
    )
    (fn,) = parse_mlir(text).ops
    assert isinstance(fn, func.FuncOp)
    return fn.clone()


def _5hd(n: int, c: int) -> tuple[str, str]:
    c1 = -(-c // 16)
    return f"{n}x{c1}x4x4x16", f"{n}x{c}x4x4xf32, NCHW -> NC1HWC0 [{n}, {c1}, 4, 4, 16]"


ROW = [25, 5, 1]
FIVE_HD = [768, 256, 64, 16, 1]


@pytest.mark.parametrize(
    ("inputs", "out", "want"),
    [
        (
            [("1x3x5", "1x3x5xf32"), ("1x2x5", "1x2x5xf32")],
            ("1x5x5", "1x5x5xf32"),
            Regions([0, 15], ROW, contiguous=True, whole_blocks=False),  # runs of 60 B, 40 B
        ),
        (
            [("2x3x5", "2x3x5xf32"), ("2x2x5", "2x2x5xf32")],
            ("2x5x5", "2x5x5xf32"),
            Regions([0, 15], ROW, contiguous=False, whole_blocks=False),
        ),
        (
            [("1x2x8", "1x2x8xf32"), ("1x4x8", "1x4x8xf32")],
            ("1x6x8", "1x6x8xf32"),
            Regions([0, 16], [48, 8, 1], contiguous=True, whole_blocks=True),
        ),
        (
            [_5hd(1, 16), _5hd(1, 32)],
            _5hd(1, 48),
            Regions([0, 256], FIVE_HD, contiguous=True, whole_blocks=True),
        ),
        (
            [_5hd(3, 16), _5hd(3, 32)],
            _5hd(3, 48),
            Regions([0, 256], FIVE_HD, contiguous=False, whole_blocks=True),
        ),
        ([_5hd(1, 8), _5hd(1, 16)], _5hd(1, 24), "layout"),  # off the C0 grid
    ],
)
def test_concat_regions(inputs, out, want):
    assert concat_regions(_concat_kernel(inputs, out)) == want


# ---- small graphs through the whole pipeline -----------------------------------------------


def convs_concat(batch: int) -> Callable[[Graph], list[SSAValue]]:
    """Two conv branches concatenated on C (16 + 32 channels: on the C0 grid), read by a
    1x1 conv; the first branch is read by a second kernel too."""

    def build(g: Graph) -> list[SSAValue]:
        x = g.input([batch, 16, 8, 8], "NCHW")
        a = g.op("relu", g.op("conv2d", x, g.const([16, 16, 3, 3], "NCHW"), pads=[1, 1, 1, 1]))
        b = g.op("sigmoid", g.op("conv2d", x, g.const([32, 16, 1, 1], "NCHW")))
        c = g.op("concat", a, b, axis=1)
        return [
            g.op("conv2d", c, g.const([8, 48, 1, 1], "NCHW")),
            g.op("conv2d", a, g.const([4, 16, 1, 1], "NCHW")),
        ]

    return build


def elementwise_concat(g: Graph) -> list[SSAValue]:
    """NCHW at O1 (row-major): relu and exp of an input concatenated, the relu read again."""
    x = g.input([1, 3, 4, 5], "NCHW")
    a = g.op("relu", x)
    c = g.op("concat", a, g.op("exp", x), axis=1)
    return [g.op("neg", c), g.op("sigmoid", a)]


def lowered(build: Callable[[Graph], Sequence[SSAValue]], level: str, place: str = "contiguous"):
    """(module, reference outputs, inputs, place-concat statistics); ``place``: the
    pipeline's ``place_concat``."""
    g = Graph()
    module = g.b.build(*build(g))
    ctx = make_context()
    run_pipeline(f"set-target{{platform=ascend910b}},{level}", ctx, module)
    reference = run_reference(module, g.arrays)
    pipeline = lowering_pipeline(place_concat=place)
    assert any(p.startswith("place-concat") for p in pipeline.split(",")) == bool(place)
    with collecting_statistics() as stats:
        run_pipeline(pipeline, ctx, module)
    module.verify()
    return module, reference, g.arrays, stats.as_dict().get("place-concat", {})


def nchw_concat_batch(g: Graph) -> list[SSAValue]:
    """NCHW at O1, batch 3, concat on H: each input's runs (per n, c) are 2 x 8 elements,
    64 B (whole 32 B blocks); the first input is read again after the concat."""
    x = g.input([3, 2, 2, 8], "NCHW")
    a = g.op("relu", x)
    c = g.op("concat", a, g.op("exp", x), axis=2)
    return [g.op("neg", c), g.op("sigmoid", a)]


CASES = [
    ("O2", convs_concat(1), "contiguous", {"placed": 1}),
    ("O1", elementwise_concat, "contiguous", {"placed": 1}),
    ("O2", convs_concat(3), "contiguous", {"refused-strided": 1}),
    ("O2", convs_concat(3), "strided", {"placed": 1, "retyped-kernels": 3}),
    ("O1", nchw_concat_batch, "strided", {"placed": 1, "retyped-kernels": 3}),
]


@pytest.mark.parametrize(
    ("level", "build", "place", "stats"),
    CASES,
    ids=["5hd_b1", "nchw_b1", "5hd_b3", "5hd_b3_strided", "nchw_b3_strided"],
)
def test_graphs_match_the_graph_level(level, build, place, stats):
    module, reference, inputs, got_stats = lowered(build, level, place)
    assert {k: v for k, v in got_stats.items() if v and k != "kernels-removed"} == stats
    check_memory_plan(module)
    for executor in EXECUTORS:
        got = run_tiles(module, inputs, executor=executor)
        for a, b in zip(got, reference, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    placed = stats.get("placed", 0)
    views = slices(module) if place == "contiguous" else strided_views(module)
    assert len({v.src for v in views}) == placed
    without, _, _, _ = lowered(build, level, place="")
    assert len(launches(module)) == len(launches(without)) - placed
    cycles, before = simulate_module(module), simulate_module(without)
    assert cycles.launch_order == launches(module)
    if placed:
        assert not any("concat" in name for name in launches(module))
        assert cycles.total_us < before.total_us


# ---- the hand-built host sequence of the lit test ------------------------------------------


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("executor", EXECUTORS)
def test_lit_sequence_runs_the_same_placed_and_planned(executor: str, strided: bool):
    module = parse_mlir(LIT.read_text())
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor=executor)
    run_pipeline(f"place-concat{{strided={str(strided).lower()}}}", make_context(), module)
    module.verify()
    assert len(slices(module)) == 4 and len(strided_views(module)) == (2 if strided else 0)
    assert_same(run_tiles(module, inputs, executor=executor), want)
    run_pipeline("plan-memory", make_context(), module)
    module.verify()
    assert check_memory_plan(module) == (17 if strided else 19)  # %v and %z: parts of %bb
    assert_same(run_tiles(module, inputs, executor=executor), want)


def _kernels_of_the_lit() -> str:
    """The kernel functions of the lit test (everything after its host function)."""
    text = LIT.read_text()
    return text[text.index("func.func @relu(") :]


# an input that is a host alias (alias-reshapes' output) of {src}: its source takes the
# region when it could itself (a buffer a launch writes), not when it is an argument
VIEW_INPUT = (
    'func.func @main(%x: memref<1x2x4xf32, "GM">) -> memref<1x4x4xf32, "GM"> attributes '
    "{{tile.signature = (!layout.tensor<1x2x4xf32>) -> !layout.tensor<1x4x4xf32>}} {{\n"
    '  %b = tile.alloc : memref<1x2x4xf32, "GM">\n'
    '  tile.launch @neg(%x, %b) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">\n'
    '  %s = tile.reshape_view {src} : memref<1x2x4xf32, "GM"> to memref<1x2x4xf32, "GM">\n'
    '  %a = tile.alloc : memref<1x2x4xf32, "GM">\n'
    '  tile.launch @relu(%x, %a) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">\n'
    '  %c = tile.alloc : memref<1x4x4xf32, "GM">\n'
    '  tile.launch @cat2(%a, %s, %c) : memref<1x2x4xf32, "GM">, memref<1x2x4xf32, "GM">, '
    'memref<1x4x4xf32, "GM">\n'
    '  func.return %c : memref<1x4x4xf32, "GM">\n}}\n'
)


@pytest.mark.parametrize(
    ("src", "stat", "left"),
    [("%x", "refused-argument", ["neg", "relu", "cat2"]), ("%b", "placed", ["neg", "relu"])],
)
@pytest.mark.parametrize("executor", EXECUTORS)
def test_an_input_that_is_an_alias_gives_its_source_the_region(executor, src, stat, left):
    module = parse_mlir(VIEW_INPUT.format(src=src) + _kernels_of_the_lit())
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor=executor)
    with collecting_statistics() as stats:
        run_pipeline("place-concat", make_context(), module)
    module.verify()
    assert stats.as_dict()["place-concat"][stat] == 1
    assert launches(module) == left and len(slices(module)) == (2 if stat == "placed" else 0)
    assert_same(run_tiles(module, inputs, executor=executor), want)
    run_pipeline("plan-memory", make_context(), module)
    check_memory_plan(module)
    assert_same(run_tiles(module, inputs, executor=executor), want)


def _reshaped_concat(n: int) -> func.FuncOp:
    """PP-YOLOE's head: a conv result reshaped (n x 1 x 64 x 4 -> n x 64 x 4), concatenated
    after an n x 256 x 4 input on axis 1."""
    a, b, r, o = f"{n}x1x64x4", f"{n}x256x4", f"{n}x64x4", f"{n}x320x4"
    text = (
        f'func.func @cat(%a: memref<{a}xf32, "GM">, %b: memref<{b}xf32, "GM">, '
        f'%out: memref<{o}xf32, "GM">) attributes {{tile.kernel = "vector"}} {{\n'
        f"  %s = graph.constant dense<[{n}, 64, 4]> : !layout.tensor<3xi64>\n"
        f'  %ta = tile.read %a : memref<{a}xf32, "GM"> -> !layout.tensor<{a}xf32, NCHW>\n'
        f'  %tb = tile.read %b : memref<{b}xf32, "GM"> -> !layout.tensor<{b}xf32>\n'
        f"  %ra = graph.reshape %ta, %s : (!layout.tensor<{a}xf32, NCHW>, "
        f"!layout.tensor<3xi64>) -> !layout.tensor<{r}xf32>\n"
        f"  %c = graph.concat %tb, %ra {{axis = 1}} : (!layout.tensor<{b}xf32>, "
        f"!layout.tensor<{r}xf32>) -> !layout.tensor<{o}xf32>\n"
    )
    return _kernel_ending(text, o, f"{o}xf32")


def test_a_reshaped_input_is_its_argument_under_another_shape():
    """The reshape moves no byte: the argument %a (1 x 1 x 64 x 4, the first argument but
    the second concat input) is the region after %b's 1024 elements; at batch 3 the region
    is strided, which the argument's shape cannot carry."""
    assert concat_regions(_reshaped_concat(1)) == Regions(
        [1024, 0], [1280, 4, 1], contiguous=True, whole_blocks=True
    )
    assert concat_regions(_reshaped_concat(3)) == "strided"


def test_the_default_pipeline_places_contiguous_runs_only():
    """Strided placement is opt-in: a strided region handed to a kernel whose tile
    strategy views that argument inside (a concat tree's boxes, a gather's strided read)
    would compose two strided views, which the tile level does not do (TimeSformer's class
    token failed so at batch 3: the strided mode is tested above with its option)."""
    passes = lowering_pipeline().split(",")
    assert "place-concat{strided=false}" in passes
    assert "place-concat" in lowering_pipeline(place_concat="strided").split(",")
