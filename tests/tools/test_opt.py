"""tilegraph-opt as a user sees it: exit codes, messages, flags, plugins."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilegraph.tools.opt.cli import run

GOOD = """
func.func @f(%x: !layout.tensor<1x20x4x4xf16, NCHW>) -> !layout.tensor<1x20x4x4xf16, NCHW> {
  %y = layout.trans_data %x : !layout.tensor<1x20x4x4xf16, NCHW> -> !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0>
  %z = graph.relu %y : !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0>
  %w = layout.trans_data %z : !layout.tensor<1x20x4x4xf16, NCHW -> NC1HWC0> -> !layout.tensor<1x20x4x4xf16, NCHW>
  func.return %w : !layout.tensor<1x20x4x4xf16, NCHW>
}
"""


def write(tmp_path: Path, text: str, name: str = "in.mlir") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_prints_origin_and_storage_views(tmp_path, capsys):
    assert run([write(tmp_path, GOOD)]) == 0
    out = capsys.readouterr().out
    assert "NCHW -> NC1HWC0 [1, 2, 4, 4, 16]" in out


def test_output_file(tmp_path):
    out = tmp_path / "out.mlir"
    assert run([write(tmp_path, GOOD), "-o", str(out)]) == 0
    assert "graph.relu" in out.read_text()


def test_parse_error_is_located_and_exit_1(tmp_path, capsys):
    path = write(tmp_path, "func.func @f(%x: !layout.tensor<2xf32>) {\n  %y = graph.relu %x\n}\n")
    assert run([path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3:1" in err
    assert "Traceback" not in err


def test_verify_error_names_file_line_op_and_function(tmp_path, capsys):
    path = write(
        tmp_path,
        """\
        func.func @g(%x: !layout.tensor<2x3xf32>) {
          %y = graph.relu %x : (!layout.tensor<2x3xf32>) -> !layout.tensor<2x4xf32>
          func.return
        }
        """,
    )
    assert run([path]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"{path}:2: error: 'graph.relu' (%y) in @g: result #0 has shape [2, 4], expected [2, 3]"
    )


def test_unknown_pass_exit_1(tmp_path, capsys):
    assert run([write(tmp_path, GOOD), "-p", "nope"]) == 1
    assert "unknown pass 'nope'" in capsys.readouterr().err


def test_missing_file_exit_1(tmp_path, capsys):
    assert run([str(tmp_path / "missing.mlir")]) == 1
    assert "cannot open" in capsys.readouterr().err


def test_help_lists_passes(capsys):
    assert run(["--help"]) == 0
    out = capsys.readouterr().out
    for name in ("infer-shapes", "O0", "O1", "O2", "--print-constants"):
        assert name in out


def test_console_script_has_no_traceback(tmp_path):
    exe = Path(sys.executable).with_name("tilegraph-opt")
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    path = write(tmp_path, "func.func @f( {\n")
    proc = subprocess.run([str(exe), path], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "error:" in proc.stderr


PLUGIN = '''
from dataclasses import dataclass
from xdsl.passes import ModulePass
from tilegraph.dialects.graph.elementwise import ReluOp

@dataclass(frozen=True)
class CountRelus(ModulePass):
    """Test plugin: tag the module with the number of relus."""
    name = "count-relus"
    attribute: str = "relus"
    def apply(self, ctx, op):
        from xdsl.dialects.builtin import IntegerAttr, i64
        n = sum(isinstance(o, ReluOp) for o in op.walk())
        op.attributes[self.attribute] = IntegerAttr(n, i64)
'''


def plugin_opt(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """tilegraph-opt ARGS in a process where PLUGIN is installed as an entry point."""
    site = tmp_path / "site"
    (site / "my_plugin").mkdir(parents=True, exist_ok=True)
    (site / "my_plugin" / "__init__.py").write_text(PLUGIN)
    dist = site / "my_plugin-0.1.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[tilegraph.passes]\ncount-relus = my_plugin:CountRelus\n"
    )
    env = dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    code = "from tilegraph.tools.opt.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env
    )


def test_entry_point_plugin_pass_is_picked_up(tmp_path):
    """A researcher's pass, installed as an entry point, runs without editing tilegraph."""
    proc = plugin_opt(tmp_path, write(tmp_path, GOOD), "-p", "count-relus")
    assert proc.returncode == 0, proc.stderr
    assert "relus = 1" in proc.stdout


def test_help_pass_describes_a_plugin_pass(tmp_path):
    proc = plugin_opt(tmp_path, "--help-pass", "count-relus")
    assert proc.returncode == 0, proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert "from plugin my-plugin 0.1)" in proc.stdout.splitlines()[0]
    assert "Test plugin: tag the module with the number of relus." in proc.stdout
    assert ["attribute", "str", "relus"] in lines
    # and its option errors name it
    proc = plugin_opt(tmp_path, write(tmp_path, GOOD), "-p", "count-relus{atribute=x}")
    assert proc.returncode == 1
    assert proc.stderr == (
        "error: pass 'count-relus': unknown option 'atribute' (did you mean 'attribute'?); "
        "its options: attribute\n"
    )


# ---- errors inside passes, broken pipes, start-up ---------------------------------------


def test_an_error_inside_a_pass_names_the_pass(tmp_path, capsys, monkeypatch):
    from tilegraph.passes.fuse_ops import FuseOpsPass

    def broken(self, ctx, op):
        return 1 + None

    monkeypatch.setattr(FuseOpsPass, "apply", broken)
    assert run([write(tmp_path, GOOD), "-p", "O2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: pass 'fuse-ops' (in O2): unsupported operand type(s) for +")
    assert "Traceback" not in err


def test_an_internal_error_inside_a_pass_names_the_pass(tmp_path, capsys, monkeypatch):
    from tilegraph.passes.infer_shapes import InferShapesPass

    def broken(self, ctx, op):
        raise KeyError("x")

    monkeypatch.setattr(InferShapesPass, "apply", broken)
    assert run([write(tmp_path, GOOD), "-p", "O1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("internal error: pass 'infer-shapes' (in O1): no entry for 'x'\n")


def test_a_closed_stdout_ends_quietly(tmp_path):
    """`tilegraph-opt ... | head`: the reader goes away; no message, exit 141 (SIGPIPE's)."""
    code = "from tilegraph.tools.opt.cli import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, write(tmp_path, GOOD), "--print-between-passes", "-p", "O1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the tool writes anything
    err = proc.stderr.read()
    assert proc.wait() == 141
    assert err == b""


def test_help_imports_no_pass_dialect_or_interpreter():
    """--help is quick because it imports none of tilegraph's passes, dialects or
    interpreters (nor sympy): the pass list is read from the sources."""
    code = (
        "import sys\n"
        "from tilegraph.tools.opt.cli import run\n"
        "assert run(['--help']) == 0\n"
        "heavy = ['sympy', 'tilegraph.dialects.graph', 'xdsl.interpreters', 'tilegraph.runtime',"
        " 'tilegraph.passes.fuse_ops', 'rich']\n"
        "print('LOADED', [m for m in heavy if m in sys.modules])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "LOADED []" in proc.stdout


def test_make_demo_tile_level_example_shows_tiled_convolutions(capsys):
    """`make demo`'s tile-level command, as the Makefile has it: both convolutions of the
    example become cube kernels with tiled loops (not host kernels that fit no tile)."""
    import re
    import shlex

    root = Path(__file__).resolve().parents[2]
    makefile = (root / "Makefile").read_text()
    line = next(
        m[1]
        for m in re.finditer(r"\$\(BIN\)/tilegraph-opt (.*)", makefile)
        if "tile-kernels" in m[1]
    )
    args = [str(root / a) if a.startswith("examples/") else a for a in shlex.split(line)]
    assert run(args) == 0
    out = capsys.readouterr().out
    assert out.count('tile.kernel = "cube"') == 2
    assert out.count("tile.mmad") == 2
    assert "no convolution tile fits" not in out


def test_an_onnx_file_with_external_data_is_read_by_its_path(tmp_path, capsys, monkeypatch):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.ones((3, 3), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w],
    )  # fmt: skip
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph), str(path), save_as_external_data=True,
              location="m.onnx.data", size_threshold=0)  # fmt: skip
    monkeypatch.chdir("/")
    assert run([str(path)]) == 0
    assert "graph.matmul" in capsys.readouterr().out
    (tmp_path / "m.onnx.data").unlink()
    assert run([str(path)]) == 1
    err = capsys.readouterr().err
    assert "external data file 'm.onnx.data'" in err and "Traceback" not in err
