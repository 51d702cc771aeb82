"""``algebraic-simplify``'s rule set: the rule framework and one module per rule family.

Rule modules are imported by :mod:`tilegraph.passes.algebraic_simplify`; each registers its
rules with :func:`~tilegraph.passes.simplify.rule.simplify_rule`.
"""
