"""The fast executor: each function of a tile-level module compiled to Python source.

* :mod:`.codegen` writes the Python (``compile_module(module).run("main", args)``;
  ``source(name)`` shows the generated code of a function);
* :mod:`.batching` plans which nests of loops run as one batch;
* :mod:`.blocks` proves where the blocks of a launch may run as one call (every other
  launch runs block by block, with the indices ``tile.launch`` gives);
* :mod:`.mix` runs a mix launch's AIC and AIV parts as generators switching at their
  cross-core flags, tile by tile; :mod:`.mix_batch` runs those whose IR hands over one
  way only (AIC -> AIV through the workspace) batched instead: the AIC's tile loop into a
  workspace copy per hand-over, then the AIV's;
* :mod:`.lockstep` runs a lockstep launch's core groups (a kernel with an all-core
  barrier: a recurrent layer shared over the cores) as one virtual group, every value
  that depends on the block index with a leading block axis, where the IR proves the
  groups take one path and exchange nothing unordered;
* :mod:`.launch_plans` plans and compiles those batched mix and lockstep launches, once
  per kernel;
* :mod:`.invariants` runs a device loop's loop-invariant loads (an LSTM's recurrent
  weight moved GM -> L1 -> L0B) on its first step only, their bytes held while it runs;
* :mod:`.forms` registers, per op class, the batched and nest forms that run a batch of
  tiles at once (:mod:`.dma`, :mod:`.moves_5hd`, :mod:`.fractal`, :mod:`.load3d_steps`,
  :mod:`.cube`, :mod:`.vector`, :mod:`.sync`),
  helped by :mod:`.windows` (window copies of a batch) and :mod:`.scratch` (reused
  temporaries);
* every op's per-tile semantics is the interpreter's
  (:mod:`tilegraph.runtime.tile_interpreter.kernels`).

The tiling is executed exactly as the IR states — every tile, in order — only the
interpreter's per-op dispatch is gone (and a device loop's invariant loads after its first
step, whose bytes are those already held). Host kernels (macro bodies) call the graph ops'
reference kernels as the interpreter does.
"""

from tilegraph.runtime.fast_executor import (  # noqa: F401 - each registers its forms
    cube,
    dma,
    fractal,
    load3d_steps,
    moves_5hd,
    scalar,
    sync,
    vector,
)
from tilegraph.runtime.fast_executor.codegen import (
    CompiledModule,
    FastExecutorError,
    compile_module,
)

__all__ = ["CompiledModule", "FastExecutorError", "compile_module"]
