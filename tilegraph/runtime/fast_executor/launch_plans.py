"""The launches :class:`~tilegraph.runtime.fast_executor.codegen.CompiledModule` runs
other than block by block: a mix launch's parts batched (:mod:`.mix_batch`) and a launch's
groups all at once (:mod:`.lockstep`) — each planned once per kernel and compiled as a
clone of its functions (``<python name>_batched`` / ``_groups``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import func

from tilegraph.dialects.tile import LaunchOp
from tilegraph.runtime.fast_executor.lockstep import GroupsPart, groups_run_together, run_groups
from tilegraph.runtime.fast_executor.mix import run_mix_launch
from tilegraph.runtime.fast_executor.mix_batch import BatchedMix, plan_batched_mix


class LaunchPlans:
    """The mix and lockstep launches of a compiled module (a base of ``CompiledModule``,
    which provides the attributes and methods declared here)."""

    batch: bool
    namespace: dict[str, Any]
    _functions: dict[str, func.FuncOp]
    _sources: dict[str, str]
    _batched_mixes: dict[tuple[str, ...], BatchedMix | None]
    _lockstep: dict[tuple[tuple[str, ...], int, int], str | None]
    _write: Callable[..., str]
    """(fn, python name, hand-over, groups plan) -> the Python source of a clone."""

    def python_name(self, symbol: str) -> str:
        raise NotImplementedError

    def bind_kernel(self, kernel: Callable[..., Any]) -> str:
        raise NotImplementedError

    def has_barrier(self, symbol: str) -> bool:
        raise NotImplementedError

    def core_of(self, symbol: str) -> str:
        raise NotImplementedError

    def batched_mix_launch(self, launch: LaunchOp) -> str | None:
        """The handle of a function running mix launch ``launch`` batched
        (:mod:`.mix_batch`: ``handle(args, groups, aiv_blocks)``), or None when its parts
        do not follow the one-way protocol, its workspace is not its own, or batching is
        off."""
        if not self.batch:
            return None
        names = launch.callees()
        if names not in self._batched_mixes:
            self._plan_batched_mix(names)
        found = self._batched_mixes[names]
        if found is None:
            return None
        if not launch.operands[found.workspace_index].has_one_use():
            return None  # the host reads the workspace: not the executor's to replace
        read = {launch.operands[i] for i in found.aic_reads}
        if any(launch.operands[i] in read for i in found.aiv_writes):
            return None  # one buffer the AIC reads and the AIV writes: the order matters
        blocks = launch.block_count
        merged = found.merges(blocks)
        functions = self.namespace
        parts = tuple(f"{self.python_name(n)}_batched" for n in names)
        plan = found

        def run(args: tuple[Any, ...], groups: int, aiv_blocks: int) -> None:
            aic, aiv = (functions[p] for p in parts)
            plan.run((aic, aiv), args, groups, aiv_blocks, merged)

        return self.bind_kernel(run)

    def _plan_batched_mix(self, names: tuple[str, ...]) -> None:
        """Plan the mix kernel ``names`` (AIC, AIV) batched and compile its parts' clones
        (as ``<python name>_batched``; their source under ``"<name> (batched)"``)."""
        aic, aiv = (self._functions.get(n) for n in names)
        found = None if aic is None or aiv is None else plan_batched_mix(aic, aiv)
        self._batched_mixes[names] = found
        if found is None:
            return
        for part, handover in ((found.aic, found.aic_handover), (found.aiv, found.aiv_handover)):
            symbol = part.sym_name.data
            text = self._write(part, f"{self.python_name(symbol)}_batched", handover)
            source = self._sources[f"{symbol} (batched)"] = text
            exec(compile(source, f"<tile:{symbol}:batched>", "exec"), self.namespace)

    def lockstep_launch(self, launch: LaunchOp) -> str | None:
        """The handle of a function running ``launch`` with all its groups at once
        (:mod:`.lockstep`: ``handle(args)``) — a lockstep launch (a kernel with an
        all-core barrier), or a mix launch the generators would run group by group — or
        None when the IR does not prove that they may, the launch is neither, or batching
        is off."""
        names = launch.callees()
        groups = launch.block_count
        lockstep = any(self.has_barrier(n) for n in names)
        if not self.batch or groups < 2 or not (lockstep or launch.is_mix):
            return None
        if launch.is_mix and launch.aiv_block_count % groups:
            return None  # not whole AIVs per group: the generator path reports it
        sub_blocks = launch.aiv_block_count // groups if launch.is_mix else 1
        key = (names, groups, sub_blocks)
        if key not in self._lockstep:
            self._lockstep[key] = self._compile_groups(names, groups, sub_blocks)
        return self._lockstep[key]

    def _compile_groups(self, names: tuple[str, ...], groups: int, sub_blocks: int) -> str | None:
        """Compile the parts ``names`` of a launch of ``groups`` groups for all groups at
        once (as ``<python name>_groups``; their source under ``"<name> (groups)"``) and
        bind the launch's runner; None when :func:`groups_run_together` refuses."""
        fns = [self._functions.get(n) for n in names]
        if any(fn is None or fn.is_declaration for fn in fns):
            return None
        plans = groups_run_together([fn for fn in fns if fn is not None], groups, sub_blocks)
        if plans is None:
            return None
        parts: list[GroupsPart] = []
        for name, fn, plan in zip(names, fns, plans, strict=True):
            assert fn is not None
            python = f"{self.python_name(name)}_groups"
            if f"{name} (groups)" not in self._sources:
                text = self._write(fn, python, groups=plan)
                self._sources[f"{name} (groups)"] = text
                exec(compile(text, f"<tile:{name}:groups>", "exec"), self.namespace)
            core = ("aic", "aiv")[len(parts)] if len(names) > 1 else self.core_of(name)
            parts.append((name, core, self.namespace[python]))
        found = tuple(parts)
        return self.bind_kernel(lambda args: run_groups(found, args, groups, sub_blocks))

    def runs_batched(self, aic: str, aiv: str) -> bool:
        """Whether the mix kernel ``aic`` / ``aiv`` runs batched (:mod:`.mix_batch`; never
        with ``batch=False``)."""
        if (aic, aiv) not in self._batched_mixes:
            self._plan_batched_mix((aic, aiv))
        return self.batch and self._batched_mixes[(aic, aiv)] is not None

    def run_mix(
        self,
        aic: str,
        aiv: str,
        args: Sequence[Any],
        groups: int = 1,
        aiv_blocks: int | None = None,
        batched: bool = False,
    ) -> bool:
        """Run a mix kernel's AIC and AIV functions together on ``args`` (as a mix launch
        of ``groups`` core groups and ``aiv_blocks`` AIVs, default one per group, would),
        as generators, or with ``batched`` each part's tile loop batched group by group
        where the kernel qualifies (:mod:`.mix_batch`; the workspace argument is then left
        alone: the parts hand over through their own). Returns whether it ran batched."""
        names = (aic, aiv)
        aiv_blocks = groups if aiv_blocks is None else aiv_blocks
        found = self._batched_mixes[names] if batched and self.runs_batched(aic, aiv) else None
        functions = self.namespace
        if found is not None:
            parts = tuple(functions[f"{self.python_name(n)}_batched"] for n in names)
            found.run((parts[0], parts[1]), tuple(args), groups, aiv_blocks, merged=False)
            return True
        run_mix_launch(
            ((aic, functions[self.python_name(aic)]), (aiv, functions[self.python_name(aiv)])),
            tuple(args),
            groups,
            aiv_blocks,
        )
        return False
