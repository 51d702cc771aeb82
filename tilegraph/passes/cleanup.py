"""Catalogue entries for the generic cleanup passes tilegraph reuses from xDSL.

``cse`` and ``dce`` are xDSL's own passes: graph ops are declared ``Pure`` (no effects), so
xDSL's CSE merges two ops with equal name, operands, properties and result types, and its DCE
erases ops without uses. ``func.return`` and ops with effects are never removed, so graph
outputs are kept. They are listed here so that ``--list-rules`` shows the whole rule set.
"""

from tilegraph.passes.simplify.rule import RuleInfo, declare_rule

declare_rule(
    RuleInfo(
        2,
        "common-subexpression-elimination",
        "two equal pure ops on the same operands",
        "one op",
        "equal means same op, operands, properties and result types; 42 canonicalises "
        "operand order first",
        "OO ORT TVM GE OM PT",
        implemented_by="cse",
    )
)
declare_rule(
    RuleInfo(
        4,
        "dead-code-elimination",
        "a pure op whose results are unused",
        "nothing",
        "graph outputs (func.return operands) and ops with effects are kept",
        "OO ORT TVM GE OM PT",
        implemented_by="dce",
    )
)
