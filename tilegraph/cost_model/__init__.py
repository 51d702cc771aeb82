"""What a lowered module costs on the NPU, without running it.

* :mod:`.tile_costs`: cycles of each ``tile`` op on one core, registered per op class;
* :mod:`.kernel_report`: what each kernel of a lowered module computes and on which unit;
* :mod:`.cycles`: the cycle model — pipes, cores, GM bandwidth, launches.

Layer: beside passes and lowering (``multi-buffer`` ranks its candidates by their loads'
costs, and the cycle model reads lowering's buffer analyses); the runtime and the tools
read the results. See docs/cycle-model.md.
"""
