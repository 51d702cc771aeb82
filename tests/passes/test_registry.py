"""The pass registry: lazy by name, docstrings read without importing, option checking."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import ClassVar

import pytest
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec

from tilegraph.passes.registry import (
    BUILTIN_PASSES,
    PipelineSpecError,
    builtin_passes,
    import_all_builtin_passes,
    parse_pipeline_spec,
    pass_from_spec,
    register_pass,
    target_docstring,
)


@pytest.mark.parametrize("name", sorted(BUILTIN_PASSES))
def test_each_listed_pass_loads_under_its_name_and_its_docstring_reads_from_source(name):
    cls = builtin_passes()[name]()
    assert cls.name == name
    assert target_docstring(BUILTIN_PASSES[name]) == inspect.cleandoc(cls.__doc__ or "")


def test_every_pass_module_imports_so_every_marked_pass_is_listed():
    import_all_builtin_passes()  # register_pass raises for a pass missing from the list


def test_a_pass_missing_from_the_list_is_refused():
    with pytest.raises(ValueError, match="not listed in BUILTIN_PASSES"):

        @register_pass
        @dataclass(frozen=True)
        class Unlisted(ModulePass):
            name: ClassVar[str] = "unlisted-pass"

            def apply(self, ctx, op) -> None:
                pass


def test_docstring_of_a_missing_module_or_class_is_none():
    assert target_docstring("tilegraph_no_such_module:Pass") is None
    assert target_docstring("tilegraph.passes.pipelines:NoSuchClass") is None


@dataclass(frozen=True)
class Options(ModulePass):
    """A pass with options of every kind."""

    name: ClassVar[str] = "options"
    count: int = 1
    ratio: float = 0.5
    label: str = "x"
    flag: bool = False
    sizes: tuple[int, ...] = ()
    limit: int | None = None

    def apply(self, ctx, op) -> None:
        pass


def spec(**parameters: tuple) -> ArgSpec:
    return ArgSpec("options", parameters)


def test_option_values_are_converted_to_the_fields_types():
    made = pass_from_spec(
        Options, spec(count=(3,), ratio=(2,), label=(910,), flag=(True,), sizes=(1, 2))
    )
    assert made == Options(count=3, ratio=2.0, label="910", flag=True, sizes=(1, 2))
    assert pass_from_spec(Options, spec(limit=())).limit is None


@pytest.mark.parametrize(
    "parameters, message",
    [
        ({"count": ("abc",)}, "pass 'options' option 'count': expected an integer, got 'abc'"),
        ({"ratio": ("x",)}, "option 'ratio': expected a number, got 'x'"),
        ({"flag": (1,)}, "option 'flag': expected true or false, got '1'"),
        ({"sizes": (1, "a")}, "expected a comma-separated list of integers, got '1,a'"),
        ({"limit": ("a",)}, "expected an integer (or nothing), got 'a'"),
        ({"cuont": (1,)}, "unknown option 'cuont' (did you mean 'count'?)"),
    ],
)
def test_option_errors_name_the_pass_option_and_expected_type(parameters, message):
    with pytest.raises(PipelineSpecError) as caught:
        pass_from_spec(Options, spec(**parameters))
    assert message in str(caught.value)


def test_pipeline_syntax_errors_are_caught_and_located():
    available = {"options": lambda: Options}
    with pytest.raises(PipelineSpecError, match=r"at column 14, in the options of 'options'"):
        parse_pipeline_spec("options{count", available)
    with pytest.raises(PipelineSpecError, match=r"unknown pass 'option' \(did you mean"):
        parse_pipeline_spec("option", available)
