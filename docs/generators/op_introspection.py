"""What the op reference (:mod:`.ops_doc`) reads from op source code rather than values.

Some facts are stated in code, not data: an enum member's docstring (the string literal
after it), the memory scopes a tile op's verifier requires, the way a tile op chooses its
pipe. These helpers read them with :mod:`ast` from the class's source, so the reference
follows the code:

* :func:`attribute_docs` — ``{name: docstring}`` of a class's attributes;
* :func:`verified_scopes` — ``[(operand, scopes)]`` from a tile op's ``verify_`` (and the
  ``verify_`` of its bases that it calls with ``super().verify_()``):
  ``require_scope(self, X, ("L1", "UB"), "the destination")`` calls, and
  ``if scope_of(X) != "GM": raise ...`` / ``if scope not in SCOPES: raise ...`` checks
  (``scope = scope_of(X)``), naming ``X`` by the operand or result it comes from;
* :func:`pipe_text` — the pipe a tile op is issued on (``PIPE``), or how it is chosen when
  :meth:`TileOp.pipe` is overridden.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from functools import cache
from typing import Any


def _class_node(cls: type) -> ast.ClassDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return None
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            return node
    return None


def attribute_docs(cls: type) -> dict[str, str]:
    """``{attribute: its docstring}``: the string literal right after each assignment in
    the class body (enum members, dataclass fields, class variables)."""
    node = _class_node(cls)
    if node is None:
        return {}
    found: dict[str, str] = {}
    for stmt, after in zip(node.body, node.body[1:], strict=False):
        target = None
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            target = stmt.target.id
        if (
            target is not None
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            found[target] = inspect.cleandoc(after.value.value)
    return found


# ---- memory scopes ------------------------------------------------------------------------


def _own_verify(cls: type) -> Any:
    """The ``verify_`` function ``cls`` defines (the op's own one when xDSL's
    ``irdl_op_definition`` wrapped it), or None."""
    fn = vars(cls).get("verify_")
    if fn is not None and "get_accessors_from_op_def" in getattr(fn, "__qualname__", ""):
        fn = inspect.getclosurevars(fn).nonlocals.get("custom_verify")
    return fn


def _syntax_tree(fn: Any) -> ast.FunctionDef | None:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    node = ast.parse(source).body[0]
    return node if isinstance(node, ast.FunctionDef) else None


def _calls_super(fn: ast.FunctionDef) -> bool:
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "verify_"
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
        ):
            return True
    return False


class _Bindings:
    """Where the local names of a ``verify_`` come from: assignments and loop variables."""

    def __init__(self, fn: ast.FunctionDef):
        self.values: dict[str, ast.expr] = {}
        self.loops: dict[str, ast.expr] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                self._bind(node.targets[0], node.value)
            elif isinstance(node, ast.For):
                iterable = node.iter
                target = node.target
                if (
                    isinstance(iterable, ast.Call)
                    and isinstance(iterable.func, ast.Name)
                    and iterable.func.id == "enumerate"
                    and isinstance(target, ast.Tuple)
                    and len(target.elts) == 2
                ):
                    iterable, target = iterable.args[0], target.elts[1]
                if isinstance(target, ast.Name):
                    self.loops[target.id] = iterable

    def _bind(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            self.values[target.id] = value
        elif (
            isinstance(target, ast.Tuple)
            and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts)
        ):
            for t, v in zip(target.elts, value.elts, strict=True):
                self._bind(t, v)

    def describe(self, expr: ast.expr) -> str:
        """The operand or result ``expr`` stands for: ``dst`` for ``self.dst.type``,
        ``each of args`` for a loop variable over ``self.args``."""
        while isinstance(expr, ast.Attribute) and expr.attr == "type":
            expr = expr.value
        if (
            isinstance(expr, ast.Attribute)
            and isinstance(expr.value, ast.Name)
            and expr.value.id == "self"
        ):
            return expr.attr
        if isinstance(expr, ast.Name):
            if expr.id in self.values:
                return self.describe(self.values[expr.id])
            if expr.id in self.loops:
                over = self.describe(self.loops[expr.id])
                return "each buffer operand" if over == "operands" else f"each of {over}"
        return ast.unparse(expr)

    def scope_source(self, expr: ast.expr) -> ast.expr | None:
        """``X`` when ``expr`` is ``scope_of(X)`` or a name bound to it."""
        if isinstance(expr, ast.Name) and expr.id in self.values:
            expr = self.values[expr.id]
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "scope_of"
            and expr.args
        ):
            return expr.args[0]
        return None


def _strings(expr: ast.expr, module: Any) -> tuple[str, ...] | None:
    """The scope names a literal (``"GM"``, ``("L1", "UB")``) or module constant holds."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return (expr.value,)
    if isinstance(expr, ast.Tuple | ast.List | ast.Set):
        items = [e.value for e in expr.elts if isinstance(e, ast.Constant)]
        return tuple(str(i) for i in items) if len(items) == len(expr.elts) else None
    if isinstance(expr, ast.Name):
        value = getattr(module, expr.id, None)
        if isinstance(value, tuple | list | frozenset | set) and all(
            isinstance(v, str) for v in value
        ):
            return tuple(value)
    return None


def _role(expr: ast.expr, where: str) -> str:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    return where


def _scopes_in(module: Any, fn: ast.FunctionDef) -> list[tuple[str, tuple[str, ...]]]:
    names = _Bindings(fn)
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "require_scope"
            and len(node.args) >= 4
        ):
            scopes = _strings(node.args[2], module)
            if scopes is not None:
                found.append((_role(node.args[3], names.describe(node.args[1])), scopes))
        elif isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body):
            test = node.test
            if (
                isinstance(test, ast.Compare)
                and len(test.ops) == 1
                and isinstance(test.ops[0], ast.NotEq | ast.NotIn)
            ):
                source = names.scope_source(test.left)
                scopes = _strings(test.comparators[0], module)
                if source is not None and scopes is not None:
                    found.append((names.describe(source), scopes))
    return found


@cache
def verified_scopes(cls: type) -> list[tuple[str, tuple[str, ...]]]:
    """``[(operand or result, allowed scopes)]`` that ``cls.verify_`` checks (see the
    module docstring); empty when the verifier checks none."""
    found: list[tuple[str, tuple[str, ...]]] = []
    seen: set[Any] = set()
    for klass in cls.__mro__:
        fn = _own_verify(klass)
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        if not getattr(fn, "__module__", "").startswith("tilegraph."):
            break
        tree = _syntax_tree(fn)
        if tree is None:
            break
        found += _scopes_in(sys.modules[fn.__module__], tree)
        if not _calls_super(tree):
            break
    return found


# ---- pipes --------------------------------------------------------------------------------


def pipe_text(cls: type) -> str:
    """The pipe a tile op is issued on: its ``PIPE``, or how its :meth:`pipe` chooses."""
    from tilegraph.dialects.tile import TileOp
    from tilegraph.dialects.tile.dma import PathCopyOp
    from tilegraph.dialects.tile.sync import FlagOp, PipeBarrierOp

    if issubclass(cls, PathCopyOp):
        return "by path (DMA paths)"
    if issubclass(cls, FlagOp):
        return f"its `{cls.ISSUED_ON}` pipe"
    if issubclass(cls, PipeBarrierOp):
        return "its `pipe` (S for ALL)"
    if getattr(cls, "pipe", None) is not TileOp.pipe:
        return "by operands"
    return str(getattr(cls, "PIPE", "S"))
