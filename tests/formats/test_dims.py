"""The one dimension type (tilegraph/formats/dims.py): normalisation, predicates, arithmetic,
text form, and a check that no other module defines a dim type of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
import sympy

from tilegraph.formats import FormatError
from tilegraph.formats.dims import (
    UNKNOWN,
    DimError,
    ceil_div,
    dim_from_text,
    dim_mul,
    dim_to_text,
    dims_compatible,
    is_static,
    is_symbolic,
    is_unknown,
    normalize_dim,
    shape_symbol,
)

S0, S1 = shape_symbol("s0"), shape_symbol("s1")


# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (0, 0),
        (7, 7),
        (-1, UNKNOWN),
        (None, UNKNOWN),
        (np.int64(12), 12),
        (np.int32(-1), UNKNOWN),
        (np.uint8(3), 3),
        (sympy.Integer(5), 5),
        (sympy.Integer(-1), UNKNOWN),
        (S0, S0),
        (2 * S0 + 1, 2 * S0 + 1),
        (sympy.ceiling(S0 / 16), sympy.ceiling(S0 / 16)),
        (S0 / 2, S0 / 2),
    ],
)
def test_normalize_dim(given: object, expected: object) -> None:
    out = normalize_dim(given)
    assert out == expected
    if isinstance(expected, int):
        assert type(out) is int  # numpy and sympy integers come back as plain ints


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (-2, "invalid dim -2: sizes are >= 0"),
        (-7, "invalid dim -7"),
        (np.int64(-3), "invalid dim -3"),
        (sympy.Integer(-4), "invalid dim -4"),
        (True, "invalid dim True: a dim is an int"),
        (False, "invalid dim False"),
        (2.0, "invalid dim 2.0"),
        (2.5, "invalid dim 2.5"),
        ("3", "invalid dim '3'"),
        (sympy.Rational(1, 2), "invalid dim 1/2: a sympy dim is an integer or an expression"),
        (sympy.Float(3.0), "invalid dim 3.0"),
        (sympy.nan, "invalid dim nan"),
        (sympy.Symbol("n"), "symbol n is not a positive integer.*shape_symbol\\('n'\\)"),
        (S0 + sympy.Symbol("k", integer=True), "symbol k is not a positive integer"),
        (sympy.Eq(S0, 1), "invalid dim Eq"),
    ],
)
def test_normalize_dim_rejects(bad: object, message: str) -> None:
    with pytest.raises(DimError, match=message):
        normalize_dim(bad)


def test_dim_error_is_a_format_error_and_a_value_error() -> None:
    assert issubclass(DimError, FormatError) and issubclass(DimError, ValueError)


def test_shape_symbol_is_a_positive_integer() -> None:
    assert S0 is shape_symbol("s0")
    assert S0.is_integer and S0.is_positive


# --------------------------------------------------------------------------- predicates


def test_is_unknown() -> None:
    for d in (-1, None, np.int64(-1), sympy.Integer(-1)):
        assert is_unknown(d), d
    for d in (0, 16, S0, True, False, -2, 2.5, "?"):
        assert not is_unknown(d), d


def test_is_static() -> None:
    for d in (0, 16, np.int64(3), sympy.Integer(4)):
        assert is_static(d), d
    for d in (-1, None, S0, True, 2.5, sympy.Integer(-1)):
        assert not is_static(d), d


def test_is_symbolic() -> None:
    assert is_symbolic(S0) and is_symbolic(2 * S0 + 1)
    for d in (3, -1, None, sympy.Integer(3)):
        assert not is_symbolic(d), d


# --------------------------------------------------------------------------- arithmetic


def test_ceil_div_and_dim_mul() -> None:
    assert ceil_div(33, 16) == 3 and ceil_div(32, 16) == 2
    assert ceil_div(UNKNOWN, 16) == UNKNOWN
    assert ceil_div(16 * S0, 16) == S0
    assert ceil_div(S0, 16) == sympy.ceiling(S0 / 16)
    assert dim_mul(2, 3, 4) == 24 and dim_mul() == 1
    assert dim_mul(2, UNKNOWN, S0) == UNKNOWN
    assert dim_mul(2, S0) == 2 * S0
    out = dim_mul(S0, 1 / S0 * 4)  # simplifies to an integer, returned as int
    assert out == 4 and type(out) is int


def test_dims_compatible() -> None:
    assert dims_compatible(3, 3) and not dims_compatible(3, 4)
    assert dims_compatible(UNKNOWN, 4) and dims_compatible(S0, UNKNOWN)
    assert dims_compatible(S0, S1)  # not provably different
    assert not dims_compatible(S0, S0 + 1)
    assert dims_compatible(2 * S0, S0 + S0)


# --------------------------------------------------------------------------- text form


@pytest.mark.parametrize(
    ("text", "dim"),
    [
        ("?", UNKNOWN),
        ("12", 12),
        (" 0 ", 0),
        ("s0", S0),
        ("2*s0 + 1", 2 * S0 + 1),
        ("ceiling(s0/16)", sympy.ceiling(S0 / 16)),
        ("3 * 4", 12),
        ("-1", UNKNOWN),
    ],
)
def test_dim_from_text(text: str, dim: object) -> None:
    assert dim_from_text(text) == dim


def test_dim_text_round_trip() -> None:
    for d in (UNKNOWN, 0, 12, S0, 2 * S0 + 1, sympy.floor(S1 / 2)):
        assert dim_from_text(dim_to_text(d)) == d
    assert dim_to_text(None) == "?"  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(("text", "message"), [("-3", "invalid dim -3"), ("1/2", "1/2")])
def test_dim_from_text_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dim_from_text(text)


def test_dim_from_text_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="invalid dimension expression '2 \\*'"):
        dim_from_text("2 *")


# --------------------------------------------------------------------------- one definition

PACKAGE = Path(__file__).resolve().parents[2] / "tilegraph"
HOME = Path("formats/dims.py")

# Names that define what a dim is: only formats/dims.py may define them at module level.
DIM_API = frozenset(
    {
        "Dim",
        "UNKNOWN",
        "DimError",
        "normalize_dim",
        "is_unknown",
        "is_unknown_dim",
        "is_static",
        "is_symbolic",
        "shape_symbol",
        "dim_from_text",
        "dim_to_text",
        "dims_compatible",
    }
)
# ... and these may not be defined anywhere else at all, not even as a method or local.
NEVER_ELSEWHERE = frozenset({"normalize_dim", "is_unknown", "is_unknown_dim"})


def _defined_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def dim_definitions(root: Path) -> list[str]:
    """``path:line: name`` for every definition of the dim API outside formats/dims.py."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if rel == HOME:
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in tree.body:
            found += [f"{rel}:{node.lineno}: {n}" for n in _defined_names(node) if n in DIM_API]
        for node in ast.walk(tree):
            if node in tree.body:
                continue
            found += [
                f"{rel}:{getattr(node, 'lineno', 0)}: {n}"
                for n in _defined_names(node)
                if n in NEVER_ELSEWHERE
            ]
    return found


def test_no_other_module_defines_a_dim_type() -> None:
    assert (PACKAGE / HOME).exists()
    assert dim_definitions(PACKAGE) == [], (
        "the dim type is defined once, in tilegraph/formats/dims.py: import it from there"
    )


def test_the_check_finds_a_second_definition(tmp_path: Path) -> None:
    (tmp_path / "formats").mkdir()
    (tmp_path / "formats" / "dims.py").write_text("Dim = int\ndef normalize_dim(d): ...\n")
    (tmp_path / "mine.py").write_text(
        "from typing import TypeAlias\nimport sympy\n"
        "Dim: TypeAlias = int | sympy.Expr\n"
        "UNKNOWN = -1\n"
        "class T:\n    def is_unknown(self): ...\n"
        "def f():\n    def normalize_dim(d): ...\n"
        "def is_static(d): ...\n"
    )
    assert dim_definitions(tmp_path) == [
        "mine.py:3: Dim",
        "mine.py:4: UNKNOWN",
        "mine.py:9: is_static",
        "mine.py:6: is_unknown",
        "mine.py:8: normalize_dim",
    ]
