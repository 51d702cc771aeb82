"""Search over what the compiler chooses: tiling parameters against the cycle model
(``tilegraph-tune``), hardware what-if sweeps (``tilegraph-sweep``), and the tasks of both run
on local worker processes or on Ray (:mod:`.workers`).

This layer sits above the runtime (it compiles, estimates and runs candidates) and below the
tools (the command lines)."""
