"""The rule table in docs/graph-optimizations.md is the catalogue, regenerated."""

from __future__ import annotations

from pathlib import Path

from tilegraph.passes.simplify.rule import format_rule_markdown, rule_catalog

DOC = Path(__file__).parents[1] / "docs" / "graph-optimizations.md"
BEGIN, END = "<!-- rules:begin -->\n", "<!-- rules:end -->"


def current_table() -> str:
    return format_rule_markdown(rule_catalog())


def test_rule_table_is_current():
    text = DOC.read_text()
    table = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert table == current_table(), (
        "docs/graph-optimizations.md is out of date: run "
        "`python tests/test_docs.py` to regenerate the rule table"
    )


def test_catalogue_has_the_issue_rules():
    numbers = {r.number for r in rule_catalog() if r.number is not None}
    names = [r.name for r in rule_catalog()]
    assert len(names) == len(set(names))
    assert len(rule_catalog()) >= 44
    # 17-19 need ops the dialect does not have (documented in the same file)
    assert set(range(1, 45)) - numbers <= {17, 18, 19}


if __name__ == "__main__":
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    DOC.write_text(f"{head}{BEGIN}{current_table()}\n{END}{tail}")
    print(f"updated {DOC}")
