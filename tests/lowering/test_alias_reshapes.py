"""``alias-reshapes``: a launch of a reshape-only kernel becomes ``tile.reshape_view``.

* the op: its verifier, and its semantics (a numpy view: a later write of the source shows
  through it);
* small graphs (O1 on ascend910b, the whole lowering pipeline): a flatten between two
  kernels, an unsqueeze read by two kernels, a reshape and a squeeze of a returned result; both executors match the graph level, the plan is proved by
  ``check_memory_plan``, and there is one launch fewer than without the pass, in the IR
  and in the cycle model (which sees the alias's reads as reads of its source in L2);
* the host sequence of ``tests/filecheck/lowering/alias_reshapes.mlir`` (aliases of
  aliases, of arguments, of a constant, a returned alias, the refused cases): the same
  outputs before the pass, after it and after ``plan-memory``;
* a source that an elementwise kernel could overwrite in place while an alias of it is
  still read: the plan keeps them apart, and the checker rejects a plan that does not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, StridedLayoutAttr, f16, f32
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from tests.lowering.test_plan_memory import assert_same, signature_inputs
from tests.lowering.test_tile_differential import Graph
from tilegraph.cost_model.cycles import simulate_module
from tilegraph.cost_model.cycles.memory import L2Residency
from tilegraph.dialects.tile import AllocOp, LaunchOp, ReshapeViewOp, ViewOp, scoped_memref
from tilegraph.lowering.transforms.plan_memory import (
    MEMORY_ATTR,
    MemoryPlanError,
    check_memory_plan,
)
from tilegraph.passes.context import make_context, parse_mlir
from tilegraph.passes.pipelines import lowering_pipeline, run_pipeline
from tilegraph.runtime import run_reference
from tilegraph.runtime.tile_interpreter.kernels import kernel_of
from tilegraph.runtime.tiles import run_tiles

EXECUTORS = ("fast", "interpret")
LIT = Path(__file__).parents[1] / "filecheck" / "lowering" / "alias_reshapes.mlir"


def launches(module: ModuleOp) -> list[str]:
    return [op.callee.string_value() for op in module.walk() if isinstance(op, LaunchOp)]


def aliases(module: ModuleOp) -> list[ReshapeViewOp]:
    return [op for op in module.walk() if isinstance(op, ReshapeViewOp)]


# ---- the op ---------------------------------------------------------------------------------


def _view_module(src: MemRefType, view: MemRefType) -> ModuleOp:
    block_fn = func.FuncOp("f", ((src,), ()))
    op = ReshapeViewOp(block_fn.body.block.args[0], view)
    block_fn.body.block.add_ops([op, func.ReturnOp()])
    return ModuleOp([block_fn])


@pytest.mark.parametrize(
    ("view", "message"),
    [
        (scoped_memref([3, 129], f32, "GM"), "elements viewed"),
        (scoped_memref([3, 128], f16, "GM"), "element type"),
        (scoped_memref([3, 128], f32, "UB"), "GM buffers"),
        (
            MemRefType(
                f32,
                [3, 128],
                StridedLayoutAttr([1, 3], 0),
                scoped_memref([1], f32, "GM").memory_space,
            ),
            "row-major",
        ),
    ],
)
def test_verifier_rejects_what_is_not_the_same_bytes(view: MemRefType, message: str):
    module = _view_module(scoped_memref([3, 16, 8], f32, "GM"), view)
    with pytest.raises(VerifyException, match=message):
        module.verify()


def test_view_is_a_view_of_the_source():
    module = _view_module(scoped_memref([3, 16, 8], f32, "GM"), scoped_memref([3, 128], f32, "GM"))
    module.verify()
    (op,) = aliases(module)
    src = np.arange(3 * 16 * 8, dtype=np.float32).reshape(3, 16, 8)
    (view,) = kernel_of(op)(src)
    np.testing.assert_array_equal(view, src.reshape(3, 128))
    src[2, 15, 7] = -1.0  # the source written after the view was made: seen through it
    assert view[2, 127] == -1.0


# ---- small graphs through the whole pipeline -----------------------------------------------


def reshape_of_a_result(g: Graph) -> list[SSAValue]:
    """O1 sinks the reshape past the exp: the alias is the returned result's."""
    return [g.op("exp", g.op("reshape", g.op("relu", g.input([3, 16, 8])), g.ints([3, 128])))]


def unsqueeze_read_twice(g: Graph) -> list[SSAValue]:
    s = g.op("unsqueeze", g.op("relu", g.input([3, 16, 8])), g.ints([0]))
    return [g.op("exp", s), g.op("neg", s)]


def flatten_into_matmul(g: Graph) -> list[SSAValue]:
    s = g.op("flatten", g.op("relu", g.input([3, 16, 8])), axis=1)
    return [g.op("matmul", s, g.const([128, 32]))]


def squeeze_of_a_result(g: Graph) -> list[SSAValue]:
    r = g.op("relu", g.input([3, 16, 8]))
    s = g.op("squeeze", g.op("sigmoid", g.input([3, 1, 16])), g.ints([1]))
    return [g.op("exp", s), r]


GRAPHS: list[Callable[[Graph], Sequence[SSAValue]]] = [
    reshape_of_a_result,
    unsqueeze_read_twice,
    flatten_into_matmul,
    squeeze_of_a_result,
]


def lowered(build: Callable[[Graph], Sequence[SSAValue]], alias: bool = True):
    """(module, reference outputs, inputs): O1 on ascend910b, then the lowering pipeline
    (without ``alias-reshapes`` when not ``alias``)."""
    g = Graph()
    module = g.b.build(*build(g))
    ctx = make_context()
    run_pipeline("set-target{platform=ascend910b},O1", ctx, module)
    reference = run_reference(module, g.arrays)
    pipeline = lowering_pipeline()
    assert "alias-reshapes" in pipeline.split(",")
    if not alias:
        pipeline = pipeline.replace("alias-reshapes,", "")
    run_pipeline(pipeline, ctx, module)
    module.verify()
    return module, reference, g.arrays


@pytest.mark.parametrize("build", GRAPHS, ids=lambda b: b.__name__)
def test_graphs_alias_the_reshape_and_match_the_graph_level(build):
    module, reference, inputs = lowered(build)
    assert len(aliases(module)) == 1
    check_memory_plan(module)
    for executor in EXECUTORS:
        got = run_tiles(module, inputs, executor=executor)
        assert len(got) == len(reference)
        for a, b in zip(got, reference, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    without, _, _ = lowered(build, alias=False)
    assert not aliases(without)
    assert len(launches(module)) == len(launches(without)) - 1
    # the cycle model runs what is launched: one kernel fewer, none of them a reshape
    cycles, before = simulate_module(module), simulate_module(without)
    assert cycles.launch_order == launches(module)
    assert len(cycles.launch_order) == len(before.launch_order) - 1
    assert cycles.total_us < before.total_us


def test_the_l2_replay_reads_an_alias_as_its_source(monkeypatch: pytest.MonkeyPatch):
    """relu writes %r and the matmul reads it through the flatten's alias: the L2 replay
    finds %r's bytes in L2 at the matmul's start (were the alias a buffer of its own, it
    would not be resident)."""
    seen: list[frozenset[int]] = []
    resident = L2Residency.resident

    def spy(self: L2Residency, buffers: Sequence[object]) -> frozenset[int]:
        seen.append(resident(self, buffers))
        return seen[-1]

    monkeypatch.setattr(L2Residency, "resident", spy)
    module, _, _ = lowered(flatten_into_matmul)
    assert [n.split("_")[0] for n in launches(module)] == ["relu", "matmul"]
    simulate_module(module)
    assert 0 in seen[1]  # the matmul's left operand, the alias


# ---- the hand-built host sequence of the lit test ------------------------------------------


@pytest.mark.parametrize("executor", EXECUTORS)
def test_lit_sequence_runs_the_same_aliased_and_planned(executor: str):
    module = parse_mlir(LIT.read_text())
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor=executor)
    run_pipeline("alias-reshapes", make_context(), module)
    module.verify()
    assert len(aliases(module)) == 5
    assert_same(run_tiles(module, inputs, executor=executor), want)
    run_pipeline("plan-memory", make_context(), module)
    module.verify()
    assert check_memory_plan(module) == 8
    assert_same(run_tiles(module, inputs, executor=executor), want)


# ---- an in-place write over an aliased source -----------------------------------------------


def _kernel(name: str, op: str, shape: str, out: str, extra: str = "") -> str:
    body = (
        f'  %t = tile.read %in : memref<{shape}xf32, "GM"> -> !layout.tensor<{shape}xf32>\n'
        f"  %r = graph.{op} %t{extra} : "
        + (
            f"!layout.tensor<{shape}xf32>\n"
            if shape == out
            else f"(!layout.tensor<{shape}xf32>, !layout.tensor<1xi64>) -> !layout.tensor<{out}xf32>\n"
        )
    )
    shape_const = "  %shape = graph.constant dense<[32]> : !layout.tensor<1xi64>\n" if extra else ""
    return (
        f'func.func @{name}(%in: memref<{shape}xf32, "GM">, %out: memref<{out}xf32, "GM">) '
        f'attributes {{tile.kernel = "vector"}} {{\n{shape_const}{body}'
        f'  tile.write %r to %out : !layout.tensor<{out}xf32> to memref<{out}xf32, "GM">\n'
        "  func.return\n}\n"
    )


# %r = relu(%x); %s = reshape(%r); %n = neg(%r); %m = exp(%s). Without the alias, %r dies
# at neg (elementwise, same type): %n would take its place. Through the alias %r is read
# by exp after neg, so neg must not write over it.
SHAPES = {"x": "4x8", "r": "4x8", "n": "4x8", "s": "32", "m": "32", "k": "32"}
"""The buffers of the host sequences below and their shapes."""


def _step(callee: str, src: str, out: str) -> str:
    """``%out = tile.alloc``, then ``tile.launch @callee(%src, %out)``."""
    a, b = SHAPES[src], SHAPES[out]
    return (
        f'  %{out} = tile.alloc : memref<{b}xf32, "GM">\n'
        f'  tile.launch @{callee}(%{src}, %{out}) : memref<{a}xf32, "GM">, memref<{b}xf32, "GM">\n'
    )


def _host(steps: Sequence[tuple[str, str, str]], results: Sequence[str]) -> str:
    """``@main(%x)`` running ``steps`` (callee, source, output), returning ``results``."""
    memrefs = ", ".join(f'memref<{SHAPES[r]}xf32, "GM">' for r in results)
    tensors = ", ".join(f"!layout.tensor<{SHAPES[r]}xf32>" for r in results)
    names = ", ".join(f"%{r}" for r in results)
    return (
        f'func.func @main(%x: memref<4x8xf32, "GM">) -> ({memrefs}) attributes '
        f"{{tile.signature = (!layout.tensor<4x8xf32>) -> ({tensors})}} {{\n"
        + "".join(_step(*step) for step in steps)
        + f"  func.return {names} : {memrefs}\n}}\n"
    )


KERNELS = {
    "relu": _kernel("relu", "relu", "4x8", "4x8"),
    "reshape": _kernel("reshape", "reshape", "4x8", "32", ", %shape"),
    "neg": _kernel("neg", "neg", "4x8", "4x8"),
    "exp": _kernel("exp", "exp", "32", "32"),
}


def _module(steps: Sequence[tuple[str, str, str]], results: Sequence[str]) -> str:
    """:func:`_host` and the kernels it launches."""
    return _host(steps, results) + "".join(KERNELS[c] for c in dict.fromkeys(s[0] for s in steps))


IN_PLACE = _module(
    [("relu", "x", "r"), ("reshape", "r", "s"), ("neg", "r", "n"), ("exp", "s", "m")], ["n", "m"]
)


def _offsets(module: ModuleOp) -> dict[str, ViewOp]:
    return {op.result.name_hint or "?": op for op in module.walk() if isinstance(op, ViewOp)}


@pytest.mark.parametrize("executor", EXECUTORS)
def test_no_in_place_write_over_a_source_an_alias_still_reads(executor: str):
    module = parse_mlir(IN_PLACE)
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor=executor)
    # without the alias the copy lets neg write over %r: the plan does so
    copied = parse_mlir(IN_PLACE)
    run_pipeline("plan-memory", make_context(), copied)
    views = _offsets(copied)
    assert views["n"].byte_offset == views["r"].byte_offset
    run_pipeline("alias-reshapes,plan-memory", make_context(), module)
    module.verify()
    assert [type(op) for op in module.walk() if isinstance(op, ReshapeViewOp | AllocOp)] == [
        AllocOp,  # the workspace
        ReshapeViewOp,
    ]
    views = _offsets(module)
    assert views["n"].byte_offset != views["r"].byte_offset
    fn = next(f for f in module.ops if isinstance(f, func.FuncOp) and MEMORY_ATTR in f.attributes)
    assert fn.attributes[MEMORY_ATTR].data["in_place"].value.data == 0  # type: ignore[attr-defined]
    check_memory_plan(module)
    assert_same(run_tiles(module, inputs, executor=executor), want)


def test_checker_rejects_a_write_over_a_source_an_alias_still_reads():
    module = parse_mlir(IN_PLACE)
    run_pipeline("alias-reshapes,plan-memory", make_context(), module)
    views = _offsets(module)
    views["n"].properties["offset"] = IntegerAttr(views["r"].byte_offset, 64)
    with pytest.raises(MemoryPlanError, match=r"%r .* and %n .* overlap|%n .* and %r .* overlap"):
        check_memory_plan(module)


# one reshape kernel launched twice: on %r (aliased) and on the argument %x into a returned
# buffer (refused: the caller owns both). The kernel stays for the launch that is left.
SHARED = _module(
    [("relu", "x", "r"), ("reshape", "r", "s"), ("exp", "s", "m"), ("reshape", "x", "k")],
    ["m", "k"],
)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_kernel_stays_while_a_launch_of_it_is_left(executor: str):
    module = parse_mlir(SHARED)
    inputs = signature_inputs(module)
    want = run_tiles(module, inputs, executor=executor)
    run_pipeline("alias-reshapes", make_context(), module)
    module.verify()
    assert launches(module) == ["relu", "exp", "reshape"] and len(aliases(module)) == 1
    assert_same(run_tiles(module, inputs, executor=executor), want)
