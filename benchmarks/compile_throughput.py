"""Compile-time throughput of the IR layer: build, verify, print and parse a chain of graph ops.

The chain alternates ``graph.relu`` and ``graph.add`` on
``!layout.tensor<8x3x224x224xf16, NCHW -> NC1HWC0 [...]>`` values inside one ``func.func``.
Prints microseconds per op for each stage at each size (default 1k and 10k ops).

    python benchmarks/compile_throughput.py [--sizes 1000 10000] [--repeat 3]

Each figure is the median of ``--repeat`` runs; these machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import ModuleOp, f16
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint

from tilegraph.dialects.graph import Graph
from tilegraph.dialects.graph.binary import AddOp
from tilegraph.dialects.graph.elementwise import ReluOp
from tilegraph.dialects.layout import Layout, TensorType


def build_chain(n_ops: int) -> ModuleOp:
    t = TensorType([8, 3, 224, 224], f16, "NCHW", "NC1HWC0")
    block = Block(arg_types=[t])
    builder = Builder(InsertPoint.at_end(block))
    value = block.args[0]
    for i in range(n_ops - 1):
        op = ReluOp.make(value) if i % 2 == 0 else AddOp.make(value, block.args[0])
        builder.insert(op)
        value = op.results[0]
    builder.insert(func.ReturnOp(value))
    fn = func.FuncOp("chain", ([t], [t]), Region(block))
    return ModuleOp([fn])


def make_context() -> Context:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, Layout, Graph):
        ctx.load_dialect(dialect)
    return ctx


def print_module(module: ModuleOp, generic: bool = False) -> str:
    import io

    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def measure(n_ops: int, repeat: int) -> dict[str, float]:
    ctx = make_context()
    t_build, module = timed(lambda: build_chain(n_ops), repeat)
    assert isinstance(module, ModuleOp)
    t_verify, _ = timed(module.verify, repeat)
    t_print, text = timed(lambda: print_module(module), repeat)
    t_generic, generic_text = timed(lambda: print_module(module, generic=True), repeat)
    assert isinstance(text, str) and isinstance(generic_text, str)
    t_parse, parsed = timed(lambda: Parser(ctx, text).parse_module(), repeat)
    t_parse_generic, _ = timed(lambda: Parser(ctx, generic_text).parse_module(), repeat)
    assert isinstance(parsed, ModuleOp)
    assert print_module(parsed) == text, "round trip changed the IR"
    per_op = 1e6 / n_ops
    return {
        "build": t_build * per_op,
        "verify": t_verify * per_op,
        "print": t_print * per_op,
        "print (generic)": t_generic * per_op,
        "parse": t_parse * per_op,
        "parse (generic)": t_parse_generic * per_op,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    results = {n: measure(n, args.repeat) for n in args.sizes}
    stages = list(next(iter(results.values())))
    header = f"{'stage':<18}" + "".join(f"{f'{n} ops':>14}" for n in args.sizes)
    print("µs per op (median of", args.repeat, "runs)")
    print(header)
    print("-" * len(header))
    for stage in stages:
        print(f"{stage:<18}" + "".join(f"{results[n][stage]:>14.1f}" for n in args.sizes))


if __name__ == "__main__":
    main()
