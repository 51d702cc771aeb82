"""Read-only analyses of lowered IR, shared by the conversion, the transforms, the executors
and the cycle model.

* :mod:`.kernel_attrs`: the attributes lowering leaves on kernels and loops (unit, tiles,
  signature, ``tile.parallel``) and how to read them;
* :mod:`.buffers`: what a kernel's on-chip buffers are used for — accesses, multi-buffer
  slots, planned addresses, live ranges, aligned sizes;
* :mod:`.kernel_walk`: the tile ops one block of a kernel issues, in program order;
* :mod:`.sync_check`: the pipe-queue checker (is a kernel's synchronisation sufficient?);
* :mod:`.host_liveness`: the host sequence as launches and GM buffer lifetimes, and the
  in-place rule.

What belongs here: code that reads the IR and changes nothing, used by more than one pass or
by what runs the IR. It imports neither :mod:`tilegraph.lowering.conversion` nor
:mod:`tilegraph.lowering.transforms` (``tests/test_layering.py``).
"""
