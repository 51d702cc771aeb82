"""Group norm on the vector unit: layer norm's program over each group of channels.

``graph.group_norm`` normalises ``x[N, C, spatial...]`` over each group of ``Cg = C / G``
channels with the spatial dims after them. In a row-major tensor a group is one contiguous
run, so the kernel views ``x`` as ``[N, G, Cg, S]`` (``S`` the spatial elements) and moves
whole groups with flat copies (a DMA moves bytes; no GM reshape is needed)::

    for n, g in tiles of [n_t, g_t, Cg, S]:                        tile.parallel
      copy_flat x[(n*G + g)*Cg*S] -> x_ub (n_t*g_t*Cg*S)            MTE2
      [copy_flat scale[g*Cg] -> scale_ub (1, g_t, Cg, 1); bias]    (per channel; per group:
                                                                    scale[g] -> (1, g_t, 1, 1))
      layer norm's program over axes (2, 3) of the tile             V
      copy_flat out_ub -> y[(n*G + g)*Cg*S]                         MTE3

A tile holds whole groups: ``g_t`` groups of one image (``g_t`` divides ``G``, so a tile
never runs into the next image, whose rows another core may be writing), or ``n_t``
images of all their groups (a ragged last one: its load is cut at the tensor's end and
fills zeros, its store is cut there). The parameters (``[C]``, GroupNormalization-21, or
``[G]``, GroupNormalization-18) are loaded per tile, or once when every tile holds all
the groups.

A group larger than UB is normalised in chunks over a GM view of it, three passes
(:mod:`.group_norm_chunks`). Stays on the host (the reason is reported): ``stash_type``
double, tensors that are not row-major, parameters computed inside the kernel. The
statistics are computed in the input's type (``stash_type`` float for an fp16 input is
not followed: fp16 tolerance).
"""

from __future__ import annotations

from math import prod

from xdsl.ir import SSAValue

from tilegraph.dialects.graph.normalization import GroupNormOp
from tilegraph.dialects.tile import CopyFlatOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, is_row_major, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.group_norm_chunks import emit_chunked_group_norm
from tilegraph.lowering.conversion.tiling.reduction import Tiles, layer_norm_program

AXES = (2, 3)
"""The normalised axes of the ``[N, G, Cg, S]`` view: a group's channels and pixels."""


def _tile_shape(
    n: int, groups: int, group: tuple[int, int], ub_bytes, budget: int
) -> list[int] | None:
    """The largest tile of whole groups that fits: all groups of ``n_t`` images, else
    ``g_t`` (a divisor of ``groups``) groups of one image."""
    for n_t in range(n, 0, -1):
        if ub_bytes([n_t, groups, *group]) <= budget:
            return [n_t, groups, *group]
    for g_t in range(groups - 1, 0, -1):
        if groups % g_t == 0 and ub_bytes([1, g_t, *group]) <= budget:
            return [1, g_t, *group]
    return None


def emit_group_norm_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.group_norm`` (see the module docstring); returns why it cannot
    (None when emitted, or in dry-run mode when it would be)."""
    op = body.ops[0]
    assert isinstance(op, GroupNormOp)
    if len(body.ops) != 1 or len(body.writes) != 1:
        return "a group norm fused with other ops"
    x_arg = body.source(op.input)
    value, out_arg = body.writes[0]
    params = [body.source(p) for p in (op.scale, op.bias)]
    if x_arg is None or value is not op.output:
        return "a group norm of a value computed inside the kernel"
    if params[0] is None or params[1] is None:
        return "normalisation parameters computed inside the kernel"
    if not all(is_row_major(tensor_of(v)) for v in (op.input, op.output)):
        return "a group norm of a tensor that is not row-major"
    if int(op.attr("stash_type")) != 1:
        return "a group norm with stash_type double"
    x_type = tensor_of(op.input)
    element = x_type.element_type
    if str(element) not in ("f32", "f16", "bf16"):
        return f"a group norm on {element}"
    shape = [int(d) for d in x_type.storage_shape]
    groups = int(op.attr("num_groups"))
    n, channels, spatial = shape[0], shape[1], prod(shape[2:])
    per_group = int(tensor_of(op.scale).storage_shape[0]) == groups and groups != channels
    group = (channels // groups, spatial)
    eb = element_bytes(element)

    def param_shape(tile: list[int]) -> list[int]:
        return [1, tile[1], 1 if per_group else tile[2], 1]

    def ub_bytes(tile: list[int]) -> int:
        kept = [tile[0], tile[1], 1, 1]
        sizes = [prod(tile)] * 4 + [prod(kept)] + [prod(param_shape(tile))] * 2
        return sum(aligned_bytes(b.hw, "UB", s * eb) for s in sizes)

    tile = _tile_shape(n, groups, group, ub_bytes, b.hw.ub_bytes // 2)
    if tile is None:  # a group larger than UB: chunks of it, three passes
        args = (x_arg, out_arg, params[0], params[1])
        view = (n, groups, *group)
        epsilon = float(op.attr("epsilon"))
        return emit_chunked_group_norm(b, args, view, per_group, element, epsilon)
    if b.dry_run:
        return None
    tiles = Tiles(
        b.buffer(tile, element, "UB", "x_ub"),
        b.buffer(tile, element, "UB", "out_ub"),
        [b.buffer(tile, element, "UB", f"full{i}_ub") for i in range(2)],
        [b.buffer([tile[0], tile[1], 1, 1], element, "UB", "stat_ub")],
        [b.buffer(param_shape(tile), element, "UB", f"param{i}_ub") for i in range(2)],
    )
    program = layer_norm_program(float(op.attr("epsilon")), prod(group))
    zero, size = b.index(0), prod(tile)
    group_elements = prod(group)

    def load_params(g: SSAValue) -> None:
        per = 1 if per_group else group[0]
        for arg, t in zip(params, tiles.params, strict=True):
            assert arg is not None
            b.add(CopyFlatOp(arg, b.affine(g, per), t, zero, tile[1] * per))

    all_groups = tile[1] == groups
    if all_groups:
        load_params(zero)
    with (
        b.loop(n, tile[0], "n", True) as i,
        b.loop(groups, tile[1], "g", True) as g,
    ):
        at = b.add_index(b.affine(i, groups * group_elements), b.affine(g, group_elements))
        b.add(CopyFlatOp(x_arg, at, tiles.x, zero, size))
        if not all_groups:
            load_params(g)
        program(b, tiles, AXES)
        b.add(CopyFlatOp(tiles.out, zero, out_arg, at, size))
    b.tiles = -(-n // tile[0]) * (groups // tile[1])
    return None
