"""Each distinct kernel of a module compiled (and each distinct launch simulated) once.

A model repeats its layers: BERT-base's twelve layers launch twelve copies of each of
their kernels, equal but for their names, their values' name hints, their locations and
the tensors they are passed. The lowering keys a kernel by that structure
(:func:`~tilegraph.lowering.transforms.kernel_memo.kernel_key`); the cycle model reuses the
key twice:

* **Compiling** (:meth:`KernelPrograms.program`). :func:`~.program.compile_kernel` reads
  nothing but the kernel's IR and the preset: its records (costs, paths, bytes, slots,
  aliases), its issuing functions and its GM accesses are functions of the structure the
  key holds. A kernel equal to one already compiled shares that :class:`KernelProgram`
  under its own name (:attr:`KernelProgram.called`); the program keeps the first kernel's
  ``fn``, so what it knows of its arguments is by position, which equal kernels share.
* **Simulating** (:func:`launch_key`). One launch's :class:`~.report.KernelCycles` is a
  function of its program, the preset and the options (fixed for a module's walk), its
  blocks (and AIV blocks), its operands' types, which of its arguments are resident in L2
  at its start and the bytes L2 wrote back for it (:class:`~.memory.L2Residency`: the only
  state between launches, decided per launch before it is simulated). The L2 replay within
  the launch (:func:`~.memory.hbm_traffic`) runs over the program's GM accesses with those
  resident arguments: equal inputs, equal traffic. So two launches with equal keys have
  equal reports but for the kernel's name, and the later one takes the earlier's. The
  residency is still updated launch by launch, so what the next launch finds in L2 is
  exactly what it found without the memo.

``CycleModelOptions(memo=False)`` compiles and simulates kernels by name, as before the
memo: the same figures (tests/runtime/test_cycle_memo.py holds them equal), slower.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace

from xdsl.dialects import func

from tilegraph.cost_model.cycles.program import KernelProgram, compile_kernel
from tilegraph.dialects.tile import LaunchOp
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.transforms.kernel_memo import kernel_key


@dataclass
class KernelPrograms:
    """The kernels of one module compiled for ``hw``, each distinct kernel once (by name
    only when not ``by_structure``)."""

    hw: HardwareModel
    by_structure: bool = True
    compiled: int = 0
    """How many times :func:`~.program.compile_kernel` ran: the distinct kernels asked for."""
    _keys: dict[str, Hashable] = field(default_factory=dict)
    _numbers: dict[Hashable, int] = field(default_factory=dict)
    _by_key: dict[Hashable, KernelProgram] = field(default_factory=dict)
    _by_name: dict[str, KernelProgram] = field(default_factory=dict)

    def key(self, fn: func.FuncOp) -> Hashable:
        """``fn``'s structure as a number, equal for equal kernels (its name when not
        :attr:`by_structure`), worked out once per name."""
        name = fn.sym_name.data
        if not self.by_structure:
            return name
        found = self._keys.get(name)
        if found is None:
            # a number: a tuple does not keep its hash, and the structure's nested tuples
            # would be hashed again by every lookup of a launch's key
            structure = kernel_key(fn)
            found = self._keys[name] = self._numbers.setdefault(structure, len(self._numbers))
        return found

    def program(self, fn: func.FuncOp) -> KernelProgram:
        """``fn`` compiled, or the program of an equal kernel under ``fn``'s name."""
        name = fn.sym_name.data
        found = self._by_name.get(name)
        if found is not None:
            return found
        key = self.key(fn)
        first = self._by_key.get(key)
        if first is None:
            self.compiled += 1
            program = self._by_key[key] = compile_kernel(fn, self.hw)
        else:
            program = replace(first, called=name)
        self._by_name[name] = program
        return program


def launch_key(
    launch: LaunchOp, kernels: tuple[Hashable, ...], resident: frozenset[int], written_back: int
) -> Hashable:
    """What one launch's report depends on besides the module-wide preset and options
    (see the module docstring): its kernels' keys (:meth:`KernelPrograms.key`; a mix
    launch's two parts), blocks, AIV blocks, operand types, resident arguments and
    written-back bytes."""
    types = tuple(v.type for v in launch.args)
    blocks = (launch.block_count, launch.aiv_block_count)
    return (kernels, blocks, types, resident, written_back)
