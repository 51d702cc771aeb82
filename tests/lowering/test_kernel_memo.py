"""A per-kernel transform runs once per distinct kernel (:mod:`.kernel_memo`): a kernel
equal to an earlier one but for its name, its values' name hints and its locations gets a
copy of that one's transformed body, its own ops keeping their own locations."""

from __future__ import annotations

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation

from tilegraph.dialects.graph.provenance import node_location
from tilegraph.lowering.transforms.kernel_memo import KernelMemo, kernel_key


def _kernel(name: str, node: str, hint: str, value: int = 1) -> func.FuncOp:
    """``name(%arg) { %a = arith.constant value; %b = addi %arg, %a }``, located at
    ``node``, its argument hinted ``hint``."""
    fn = func.FuncOp(name, ((IndexType(),), ()))
    arg = fn.body.block.args[0]
    arg.name_hint = hint
    const = arith.ConstantOp(IntegerAttr(value, IndexType()))
    add = arith.AddiOp(arg, const.result)
    fn.body.block.add_ops([const, add, func.ReturnOp()])
    for op in fn.walk():
        op.location = node_location(node)
    return fn


def _add_a_constant(fn: func.FuncOp, calls: list[str]) -> int:
    """The transform: a constant 7 before the return (no location: the memo gives it the
    kernel's)."""
    calls.append(fn.sym_name.data)
    ret = fn.body.block.last_op
    assert ret is not None
    fn.body.block.insert_op_before(arith.ConstantOp(IntegerAttr(7, IndexType())), ret)
    return len(calls)


def _located(fn: func.FuncOp) -> list[tuple[str, str]]:
    return [(op.name, str(op.location)) for op in fn.body.block.ops]


def test_equal_kernels_are_transformed_once():
    first, second = _kernel("k1", "n1", "x"), _kernel("k2", "n2", "y")
    second.location = node_location("n2")
    assert kernel_key(first) == kernel_key(second)
    calls: list[str] = []
    memo: KernelMemo[int] = KernelMemo()
    assert memo.apply(first, lambda f: _add_a_constant(f, calls)) == 1
    assert memo.apply(second, lambda f: _add_a_constant(f, calls)) == 1  # the first one's result
    assert calls == ["k1"]
    assert kernel_key(first) == kernel_key(second)  # the same transformed body
    added: Operation = list(second.body.block.ops)[2]
    assert isinstance(added, arith.ConstantOp) and added.value == IntegerAttr(7, IndexType())
    assert [loc for _, loc in _located(second)] == [
        str(node_location("n2")),
        str(node_location("n2")),
        str(node_location("n2")),  # the added op: the kernel's location
        str(node_location("n2")),
    ]
    assert second.sym_name.data == "k2" and second.body.block.args[0].uses
    assert second.body.block.args[0].name_hint == "y"  # its own names too


def test_different_kernels_are_each_transformed():
    calls: list[str] = []
    memo: KernelMemo[int] = KernelMemo()
    memo.apply(_kernel("k1", "n1", "x", 1), lambda f: _add_a_constant(f, calls))
    memo.apply(_kernel("k2", "n1", "x", 2), lambda f: _add_a_constant(f, calls))
    assert calls == ["k1", "k2"]


def test_the_transforms_other_inputs_are_part_of_the_key():
    calls: list[str] = []
    memo: KernelMemo[int] = KernelMemo()
    seen: list[int] = []

    def transform(fn: func.FuncOp, blocks: int) -> int:
        seen.append(blocks)
        return _add_a_constant(fn, calls)

    memo.apply(_kernel("k1", "n1", "x"), transform, 1)
    memo.apply(_kernel("k2", "n1", "x"), transform, 2)
    assert seen == [1, 2]
