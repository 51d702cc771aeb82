"""run_tasks: the results in task order on one worker and on a process pool, each result
seen once by ``on_result``, a task's exception raised in the caller, bad worker counts
refused."""

from __future__ import annotations

import pytest

from tilegraph.search.workers import WorkersError, run_tasks


def _square(x: int) -> int:
    return x * x


def _fail(x: int) -> int:
    raise ValueError(f"task {x} failed")


@pytest.mark.parametrize("workers", [1, 2])
def test_results_come_back_in_task_order(workers):
    seen: list[tuple[int, int]] = []
    results = run_tasks(
        _square, list(range(7)), workers=workers, on_result=lambda i, r: seen.append((i, r))
    )
    assert results == [x * x for x in range(7)]
    assert sorted(seen) == [(x, x * x) for x in range(7)]


def test_a_failing_task_raises_in_the_caller():
    with pytest.raises(ValueError, match=r"task [12] failed"):
        run_tasks(_fail, [1, 2], workers=2)


def test_zero_workers_is_refused():
    with pytest.raises(WorkersError, match="at least 1"):
        run_tasks(_square, [1], workers=0)
