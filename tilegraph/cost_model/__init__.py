"""What a lowered module costs on the NPU, without running it.

* :mod:`.tile_costs`: cycles of each ``tile`` op on one core, registered per op class;
* :mod:`.kernel_report`: what each kernel of a lowered module computes and on which unit;
* :mod:`.cycles`: the cycle model — pipes, cores, GM bandwidth, launches.

Layer: beside passes and lowering (``multi-buffer`` ranks its candidates by their loads'
costs, and the cycle model reads lowering's buffer analyses); the runtime and the tools
read the results. See docs/cycle-model.md.
"""

COST_MODEL_VERSION = 2
"""The cycle model's version, part of every tuning database key
(:mod:`tilegraph.lowering.tuning_db`): results scored by another version are not reused.

Bump rule: add one whenever a change makes the cycle model score any lowered kernel
differently (a tile op's cost, the pipes' ordering, GM sharing or L2 reuse, launch or
scheduling costs, the host model) — a change that could reorder two candidates. Changes
that only add reporting (new fields, traces, text) do not bump it."""
