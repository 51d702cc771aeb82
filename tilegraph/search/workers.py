"""Independent tasks on local worker processes or on Ray, with the same results either way.

:func:`run_tasks` maps a picklable top-level function over a list of tasks and returns the
results in task order, whatever order they finished in, so a search that decides only from
the returned list (and its own seeded random numbers) finds the same answer on one worker,
on a process pool and on a Ray cluster. ``on_result`` sees each result as it arrives
(completion order: a progress display, a database commit per result).

Ray is imported only when asked for (``ray=""`` starts a local Ray, ``ray="ADDRESS"`` joins
a cluster); nothing else in tilegraph imports it.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")


class WorkersError(RuntimeError):
    """Ray is asked for but not installed or not reachable, or a worker count is invalid."""


def _check_workers(workers: int) -> None:
    if workers < 1:
        raise WorkersError(f"--workers must be at least 1, got {workers}")


def run_tasks(
    fn: Callable[[Task], Result],
    tasks: Sequence[Task],
    *,
    workers: int = 1,
    ray: str | None = None,
    on_result: Callable[[int, Result], None] | None = None,
) -> list[Result]:
    """``[fn(t) for t in tasks]``, computed in this process (``workers == 1``, no Ray), on a
    pool of ``workers`` forked processes, or on Ray (``ray`` not None: "" for a local Ray
    of ``workers`` CPUs, else a cluster's address). ``on_result(index, result)`` is called
    in this process as each result arrives. An exception in a task is raised here."""
    _check_workers(workers)
    if ray is not None:
        return _on_ray(fn, tasks, workers, ray, on_result)
    if workers == 1 or len(tasks) <= 1:
        results = []
        for index, task in enumerate(tasks):
            results.append(fn(task))
            if on_result is not None:
                on_result(index, results[-1])
        return results
    return _on_pool(fn, tasks, workers, on_result)


def _on_pool(
    fn: Callable[[Task], Result],
    tasks: Sequence[Task],
    workers: int,
    on_result: Callable[[int, Result], None] | None,
) -> list[Result]:
    results: dict[int, Result] = {}
    # fork: the workers inherit the imported compiler (spawn would import it again, ~1 s each)
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)), mp_context=context) as pool:
        pending: dict[Future[Result], int] = {pool.submit(fn, t): i for i, t in enumerate(tasks)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                index = pending.pop(future)
                results[index] = future.result()
                if on_result is not None:
                    on_result(index, results[index])
    return [results[i] for i in range(len(tasks))]


def ray_module() -> Any:
    """The ``ray`` package, or :class:`WorkersError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise WorkersError(
            "Ray is not installed; install it with: pip install 'tilegraph[distributed]'"
        ) from None
    return ray


def _on_ray(
    fn: Callable[[Task], Result],
    tasks: Sequence[Task],
    workers: int,
    address: str,
    on_result: Callable[[int, Result], None] | None,
) -> list[Result]:
    ray = ray_module()
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        except ConnectionError as e:
            raise WorkersError(f"cannot reach the Ray cluster at '{address}': {e}") from None
    remote = ray.remote(fn)
    pending = {remote.remote(task): i for i, task in enumerate(tasks)}
    results: dict[int, Result] = {}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            index = pending.pop(ref)
            results[index] = ray.get(ref)
            if on_result is not None:
                on_result(index, results[index])
    return [results[i] for i in range(len(tasks))]
