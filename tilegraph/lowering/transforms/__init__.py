"""Tile-level transforms: passes from tiled IR to tiled IR, run after ``tile-kernels``.

In the order the lowering pipeline runs them
(:func:`tilegraph.passes.pipelines.lowering_pipeline`):

* :mod:`.alias_reshapes`: ``alias-reshapes`` — right after ``lower-graph-to-kernels``: a
  launch of a reshape-only kernel on a row-major tensor becomes a host alias
  (``tile.reshape_view``), the kernel and its GM buffer gone;
* :mod:`.place_concat`: ``place-concat`` — next: a concat whose inputs are contiguous runs
  of its output runs no kernel, its producers write into the output
  (``tile.slice_view``);
* :mod:`.apply_tuning`: ``apply-tuning`` — before ``tile-kernels`` (when the pipeline is
  given a tuning database): the database's best ``tile.params`` on the macro kernels;
* :mod:`.multi_buffer`: ``multi-buffer`` — ping-pong slots for the buffers loaded in a loop;
* :mod:`.plan_local_memory`: ``plan-local-memory`` — a byte address per on-chip buffer
  (and its checker);
* :mod:`.split_cores`: ``split-cores`` — a kernel's parallel loops shared out over the cores;
* :mod:`.inject_sync`: ``inject-sync`` — flags and barriers between the pipes;
* :mod:`.plan_memory`: ``plan-memory`` — the host's GM tensors placed in one workspace
  (and its checker);
* :mod:`.verify_sync`: ``verify-sync`` — the pipe-queue checker as a pass: a kernel whose
  flags miss a dependence is a compile error (``tilegraph.compile`` and ``tilegraph-run``
  run it last unless told not to).
* :mod:`.verify_target`: ``verify-target`` — the preset's rules of where ops may run
  (decoupled AIC / AIV), at any point after ``tile-kernels``.

What belongs here: passes that rewrite or annotate tile-level IR, with the checkers that
prove their own result. What several of them, the executors or the cycle model read (buffer
accesses, liveness, the pipe-queue checker) belongs in :mod:`tilegraph.lowering.analysis`;
nothing here imports :mod:`tilegraph.lowering.conversion`.
"""

PASSES: dict[str, str] = {
    "alias-reshapes": ".alias_reshapes:AliasReshapesPass",
    "apply-tuning": ".apply_tuning:ApplyTuningPass",
    "inject-sync": ".inject_sync:InjectSyncPass",
    "multi-buffer": ".multi_buffer:MultiBufferPass",
    "plan-local-memory": ".plan_local_memory:PlanLocalMemoryPass",
    "place-concat": ".place_concat:PlaceConcatPass",
    "plan-memory": ".plan_memory:PlanMemoryPass",
    "split-cores": ".split_cores:SplitCoresPass",
    "verify-sync": ".verify_sync:VerifySyncPass",
    "verify-target": ".verify_target:VerifyTargetPass",
}
"""This package's passes by ``-p`` name, for :mod:`tilegraph.passes.registry`:
``".module:Class"`` (relative to the package), imported only when the pass is used."""
