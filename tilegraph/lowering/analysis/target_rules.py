"""What a tiled module may do on its preset: the rules of a decoupled core group, and of
a preset without an L0C -> GM path.

On a decoupled preset (``HardwareModel.coupled`` False: 910B's AIC + two AIV per group) a
kernel function runs on one kind of core. An AIC has L1, L0A, L0B, L0C and the FIX pipe,
no vector unit and no UB; an AIV has UB and the vector unit, no L1 or L0 buffers; fixpipe
writes L0C -> GM or L0C -> L1 only (Ascend C's Fixpipe API on A2/A3; CO1 -> UB exists on
the coupled 310P-style cores). So, in a module whose target (:func:`tilegraph.target.
target_of`) is decoupled:

* ``tile.fixpipe`` into UB is rejected (by the op's own verifier too, which reads the
  preset);
* in an AIC function (a mix kernel's AIC part, a cube kernel, or a function with L1 / L0
  buffers) a vector-unit op (pipe V) or a UB access is rejected;
* in an AIV function (a mix kernel's AIV part, a vector kernel) an L1 / L0 buffer is
  rejected;
* ``tile.sub_block_idx`` is rejected anywhere but in a mix kernel's AIV part (on any
  preset): only there does an instance have group mates to tell apart; a plain vector
  kernel's blocks are each a group of their own (Ascend C: ``GetSubBlockIdx()`` is
  meaningful in a mix kernel's AIV code).

On a preset without an L0C -> GM path (``HardwareModel.l0c_to_gm`` False: the 310P3,
whose CANN platform configuration lacks ``fix_pipe_l0c2out``) ``tile.fixpipe`` into GM is
rejected: results go L0C -> UB, then ``tile.copy`` UB -> GM.

A kernel needing both units is a mix kernel (:mod:`tilegraph.dialects.tile.cross_core`).
:func:`target_violations` lists the violations of a module, :func:`verify_target` raises
the first, located (``file:line`` of the op when it has one, the function, the preset).
Coupled presets (``ascend310p``) allow all of the decoupled rules.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, MemRefType, ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

from tilegraph.dialects.tile.base import CUBE_SCOPES, TileOp, scope_of
from tilegraph.dialects.tile.cores import SubBlockIdxOp
from tilegraph.dialects.tile.fixpipe import FixpipeOp
from tilegraph.dialects.tile.host import AllocOp
from tilegraph.lowering.analysis.kernel_attrs import kernel_unit, mix_part
from tilegraph.target import target_of


def _scopes(op: Operation) -> set[str]:
    """The scopes of the buffers ``op`` takes or makes."""
    found = {scope_of(v) for v in op.operands if isinstance(v.type, MemRefType)}
    found.update(scope_of(r) for r in op.results if isinstance(r.type, MemRefType))
    return found


def _where(op: Operation, fn: func.FuncOp) -> str:
    loc = op.location
    place = ""
    if isinstance(loc, FileLineColLoc):
        place = f"{loc.filename.data}:{loc.line.data}: "
    names = ", ".join(f"%{r.name_hint}" for r in op.results if r.name_hint)
    return f"{place}'{op.name}'" + (f" ({names})" if names else "") + f" in @{fn.sym_name.data}"


def function_role(fn: func.FuncOp) -> str:
    """The core a kernel runs on, "aic" or "aiv": its mix part, else its unit (cube:
    AIC), else whether it uses AIC buffers."""
    part = mix_part(fn)
    if part is not None:
        return part
    unit = kernel_unit(fn)
    if unit in ("cube", "vector"):
        return "aic" if unit == "cube" else "aiv"
    uses_cube = any(
        isinstance(op, AllocOp) and scope_of(op.result) in CUBE_SCOPES for op in fn.walk()
    )
    return "aic" if uses_cube else "aiv"


def function_violations(fn: func.FuncOp, preset: str) -> list[tuple[Operation, str]]:
    """The ops of kernel ``fn`` a decoupled preset named ``preset`` cannot run where they
    are (see the module docstring)."""
    role = function_role(fn)
    found: list[tuple[Operation, str]] = []
    for op in fn.walk():
        if not isinstance(op, TileOp):
            continue
        if isinstance(op, FixpipeOp) and scope_of(op.dst) == "UB":
            found.append(
                (
                    op,
                    f"fixpipe writes L0C -> UB, which {preset} (decoupled AIC / AIV) has no "
                    "path for: L0C goes to GM or L1 (a mix kernel's GM workspace)",
                )
            )
        elif role == "aic" and (op.pipe() == "V" or "UB" in _scopes(op)):
            what = "a vector-unit op" if op.pipe() == "V" else "a UB access"
            found.append(
                (op, f"{what} in an AIC function; on {preset} the AIC has no vector unit or UB")
            )
        elif role == "aiv" and _scopes(op) & CUBE_SCOPES:
            scopes = ", ".join(sorted(_scopes(op) & CUBE_SCOPES))
            found.append(
                (op, f"{scopes} buffer in an AIV function; on {preset} the AIV has UB only")
            )
    return found


def sub_block_violations(fn: func.FuncOp) -> list[tuple[Operation, str]]:
    """``tile.sub_block_idx`` outside a mix kernel's AIV part (any preset)."""
    if mix_part(fn) == "aiv":
        return []
    return [
        (op, "tile.sub_block_idx outside a mix kernel's AIV part (only there does an "
         "instance have group mates: the AIVs of one AIC)")
        for op in fn.walk()
        if isinstance(op, SubBlockIdxOp)
    ]  # fmt: skip


def fixpipe_out_violations(fn: func.FuncOp, preset: str) -> list[tuple[Operation, str]]:
    """``tile.fixpipe`` into GM on a preset without an L0C -> GM path (``preset``'s
    ``HardwareModel.l0c_to_gm`` False: the 310P3)."""
    return [
        (op, f"fixpipe writes L0C -> GM, which {preset} has no path for (no "
         "fix_pipe_l0c2out): L0C goes to UB, then tile.copy UB -> GM")
        for op in fn.walk()
        if isinstance(op, FixpipeOp) and scope_of(op.dst) == "GM"
    ]  # fmt: skip


def target_violations(module: ModuleOp) -> list[tuple[Operation, str]]:
    """(op, located message) of every op the module's preset cannot run as placed; on a
    coupled preset only a misplaced ``tile.sub_block_idx`` and, without an L0C -> GM
    path, a fixpipe into GM."""
    hw = target_of(module).hw
    found: list[tuple[Operation, str]] = []
    for fn in module.ops:
        if isinstance(fn, func.FuncOp):
            rules = sub_block_violations(fn)
            if not hw.coupled:
                rules += function_violations(fn, hw.name)
            if not hw.l0c_to_gm:
                rules += fixpipe_out_violations(fn, hw.name)
            for op, message in rules:
                found.append((op, f"{_where(op, fn)}: {message}"))
    return found


def verify_target(module: ModuleOp) -> None:
    """Raise :class:`VerifyException` with the first violation (see the module
    docstring)."""
    found = target_violations(module)
    if found:
        raise VerifyException(found[0][1])
