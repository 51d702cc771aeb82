"""Pipeline text for tests that tile with options: the target options go to ``set-target``,
the rest to ``tile-kernels``."""

from __future__ import annotations


def split_target(options: str) -> tuple[str, str]:
    """``tile-kernels`` options as ``set-target{platform/precision},...tile-kernels{rest}``
    (lower-graph-to-kernels already reads the module's target)."""
    words = options.split()
    target = " ".join(w for w in words if w.startswith(("platform=", "precision=")))
    rest = " ".join(w for w in words if not w.startswith(("platform=", "precision=")))
    return f"set-target{{{target}}}", f"tile-kernels{{{rest}}}"
