"""The guard machinery of symbolic shapes (DESIGN.md section 7).

The dims themselves (int, unknown, sympy expression over the positive-integer symbols
``s0, s1, ...``) and their text form are :mod:`tilegraph.formats.dims`, the one definition of
a dimension.

- :mod:`~tilegraph.symbolic.env`: :class:`ShapeEnv`, which makes symbols for unknown input
  dims (modes dynamic / duck / static, 0/1 specialisation), keeps their hints, records
  expect/assert guards and simplifies with the replacements those guards imply.
- :mod:`~tilegraph.symbolic.guards`: guards and their evaluation on new sizes.
- :mod:`~tilegraph.symbolic.replacements`: the union-find of equalities.
- :mod:`~tilegraph.symbolic.reasoning`: deciding conditions from obvious facts.
"""

from tilegraph.symbolic.env import MODES, Mode, ShapeEnv
from tilegraph.symbolic.guards import (
    Bindings,
    Guard,
    GuardError,
    GuardFailure,
    GuardFailures,
    GuardKind,
    check_guards,
    condition_text,
)
from tilegraph.symbolic.replacements import ReplacementConflict, Replacements

__all__ = [
    "MODES",
    "Bindings",
    "Guard",
    "GuardError",
    "GuardFailure",
    "GuardFailures",
    "GuardKind",
    "Mode",
    "ReplacementConflict",
    "Replacements",
    "ShapeEnv",
    "check_guards",
    "condition_text",
]
