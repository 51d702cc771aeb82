"""GridSample's taps on the vector unit: per spatial axis, a tile of normalised grid
coordinates becomes the positions and weights of the input elements each output reads.

The rules are the graph level's (:func:`~tilegraph.dialects.graph.vision_kernels.axis_taps`,
PyTorch's and onnxruntime's), computed here with vector instructions on ``[1, 1, P]`` float32
tiles of ``P`` output positions:

* unnormalise: ``(g + 1) / 2 * (size - 1)`` with ``align_corners``, else
  ``((g + 1) * size - 1) / 2`` (in the grid's float32, in the reference's order of
  operations, so the two agree bit for bit);
* nearest rounds half to even (``vround``); for nearest and linear, ``border`` clamps the
  coordinate into ``[0, size - 1]`` and ``reflection`` reflects it at the borders
  (``[-0.5, size - 0.5]``, or ``[0, size - 1]`` with ``align_corners``);
* the taps: nearest one (weight 1), linear ``floor(c)`` and ``floor(c) + 1`` with weights
  ``1 - t`` and ``t`` (``t = c - floor(c)``), cubic the four around ``floor(c)`` with Keys'
  weights (``a = -0.75``; its coordinate is not moved, each tap is padded instead);
* each tap's padding: ``zeros`` zeroes the weight of a tap outside the axis (a nearest
  tap keeps an in-bounds mask instead) and moves its position to 0; ``border`` and
  ``reflection`` clamp the position (a reflected coordinate's taps can only step one
  element past an edge, where reflecting and clamping agree; a cubic tap is reflected
  first).

Positions stay float32 (exact integers below 2^24) until the kernel combines the axes
into a flat offset. Every clamp is written so that a NaN coordinate (a NaN in the grid)
gives an in-bounds position: comparisons with NaN are false, and a select on them picks
the bound, so no gather reads outside its plane.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import f32, i1
from xdsl.ir import SSAValue

from tilegraph.dialects.graph.vision_kernels import CUBIC_A, borders
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter

Tile = SSAValue

TAPS_PER_AXIS = {"nearest": 1, "linear": 2, "cubic": 4}
"""Input positions one output position reads along each spatial axis."""


@dataclass(frozen=True)
class AxisTap:
    """One tap of an axis: its position tile (float32, in bounds) and either its weight
    tile (linear, cubic) or, for a nearest tap under ``zeros`` padding, its in-bounds mask
    (None: always in bounds)."""

    position: Tile
    weight: Tile | None = None
    inside: Tile | None = None


class TapEmitter:
    """Emits the taps of the axes of one tile of ``width`` output positions on scratch
    tiles it allocates (once per kernel: the same tiles serve every output tile).

    :meth:`prepare` (called before the kernel's loops) fills the ``[1, 1, 1]`` constant
    tiles the bounds comparisons and selects read, for axes of the given sizes."""

    def __init__(self, b: KernelBuilder, width: int):
        self.b = b
        self._shape = [1, 1, width]
        self._constants: dict[float, Tile] = {}
        self._temps: dict[str, Tile] = {}
        self.count = 0
        """Float32 ``[1, 1, width]`` tiles allocated so far."""
        self.masks = 0
        """i1 ``[1, 1, width]`` tiles allocated so far."""
        self.coords = [self.tile("gx_ub"), self.tile("gy_ub")]
        """The normalised coordinates of the tile, x (along W) first."""
        self.e = VectorEmitter(b, self.coords[0], [])

    def tile(self, name: str) -> Tile:
        """A fresh float32 tile (a tap's position or weight: it lives to the blend)."""
        self.count += 1
        return self.b.buffer(self._shape, f32, "UB", name)

    def temp(self, name: str, mask: bool = False) -> Tile:
        """The scratch tile ``name``, shared by every use of that name (it lives within
        one step of the taps)."""
        found = self._temps.get(name)
        if found is None:
            if mask:
                self.masks += 1
                found = self.b.buffer(self._shape, i1, "UB", name)
            else:
                found = self.tile(name)
            self._temps[name] = found
        return found

    def prepare(self, sizes: list[int], padding: str, align_corners: bool) -> None:
        """Allocate and fill the constants the taps of axes of ``sizes`` under ``padding``
        compare with: 0 and ``size - 1``, and the borders and their span to reflect at."""
        values = {0.0}
        for size in sizes:
            values.add(float(size - 1))
            if padding == "reflection":
                low, high = borders(size, align_corners)
                values |= {low, high, high - low}
        for value in sorted(values):
            tile = self._constants[value] = self.b.buffer([1, 1, 1], f32, "UB", "const_ub")
            self.e.fill(tile, value)

    def constant(self, value: float) -> Tile:
        return self._constants[value]

    def add(self, src: Tile, value: float, dst: Tile) -> None:
        """``dst = src + value`` (a copy, or nothing, when ``value`` is 0)."""
        if value:
            self.e.scalar("vadds", src, value, dst)
        elif src is not dst:
            self.e.unary("vcopy", src, dst)

    # ---- the coordinate ---------------------------------------------------------------
    def unnormalize(self, coord: Tile, size: int, align_corners: bool) -> None:
        """``coord`` in place: normalised -> pixel coordinates along an axis of ``size``."""
        e = self.e
        e.scalar("vadds", coord, 1.0, coord)
        if align_corners:
            e.scalar("vmuls", coord, 0.5, coord)
            e.scalar("vmuls", coord, float(size - 1), coord)
        else:
            e.scalar("vmuls", coord, float(size), coord)
            e.scalar("vadds", coord, -1.0, coord)
            e.scalar("vmuls", coord, 0.5, coord)

    def reflect(self, x: Tile, low: float, high: float, out: Tile) -> None:
        """``out = x`` reflected at ``low`` and ``high`` until it lies between them
        (:func:`~tilegraph.dialects.graph.vision_kernels.reflect`); ``out`` may be ``x``."""
        e = self.e
        span = high - low
        if span <= 0:
            e.fill(out, low)
            return
        below, above, even = (self.temp(n, True) for n in ("below_ub", "above_ub", "even_ub"))
        dx, flips, rest, tmp = (self.temp(n) for n in ("dx_ub", "flips_ub", "rest_ub", "tmp_ub"))
        e.compare("lt", x, self.constant(low), below)
        e.compare("gt", x, self.constant(high), above)
        e.scalar("vmuls", x, -1.0, dx)  # below: low - x
        self.add(dx, low, dx)
        self.add(x, -high, tmp)  # above: x - high
        e.select(below, dx, tmp, dx)
        e.binary("vdiv", dx, self.constant(span), flips)
        e.unary("vfloor", flips, flips)
        e.scalar("vmuls", flips, span, tmp)
        e.binary("vsub", dx, tmp, rest)
        e.scalar("vmuls", flips, 0.5, tmp)  # even: flips == 2 * floor(flips / 2)
        e.unary("vfloor", tmp, tmp)
        e.scalar("vmuls", tmp, 2.0, tmp)
        e.compare("eq", tmp, flips, even)
        self.add(rest, low, tmp)  # low + rest
        e.scalar("vmuls", rest, -1.0, rest)  # high - rest
        self.add(rest, high, rest)
        e.select(even, tmp, rest, flips)  # from the low border
        e.select(even, rest, tmp, dx)  # from the high border
        e.select(above, dx, x, out)
        e.select(below, flips, out, out)

    def clamp(self, position: Tile, size: int) -> None:
        """``position`` in place into ``[0, size - 1]`` (NaN -> 0)."""
        e = self.e
        ok = self.temp("ge0_ub", True)
        zero = self.constant(0.0)
        e.compare("ge", position, zero, ok)
        e.select(ok, position, zero, position)
        e.scalar("vmins", position, float(size - 1), position)

    # ---- the taps ---------------------------------------------------------------------
    def taps(
        self, coord: Tile, size: int, mode: str, padding: str, align_corners: bool
    ) -> list[AxisTap]:
        """The taps of the normalised coordinates ``coord`` (overwritten) along an axis of
        ``size`` (see the module docstring)."""
        e = self.e
        self.unnormalize(coord, size, align_corners)
        if mode == "nearest":
            e.unary("vround", coord, coord)
        if mode != "cubic" and padding == "border":
            e.scalar("vmaxs", coord, 0.0, coord)
            e.scalar("vmins", coord, float(size - 1), coord)
        elif mode != "cubic" and padding == "reflection":
            self.reflect(coord, *borders(size, align_corners), coord)
        if mode == "nearest":
            return [self._padded(coord, None, size, padding, align_corners)]
        base, t = self.temp("base_ub"), self.temp("frac_ub")
        e.unary("vfloor", coord, base)
        e.binary("vsub", coord, base, t)
        weights = _linear_weights if mode == "linear" else _cubic_weights
        first = 0 if mode == "linear" else -1
        taps = []
        for k, weigh in enumerate(weights):
            position, weight = self.tile("tap_ub"), self.tile("weight_ub")
            self.add(base, float(first + k), position)
            weigh(self, t, weight)
            taps.append(self._padded(position, weight, size, padding, align_corners))
        return taps

    def _padded(
        self, position: Tile, weight: Tile | None, size: int, padding: str, align_corners: bool
    ) -> AxisTap:
        """A tap with ``padding`` applied to its position (and weight)."""
        e = self.e
        if padding != "zeros":
            if padding == "reflection" and weight is not None:
                self.reflect(position, *borders(size, align_corners), position)
            self.clamp(position, size)
            return AxisTap(position, weight)
        inside, high_ok = self.temp("inside_ub", True), self.temp("le_ub", True)
        if weight is None:  # a nearest tap's mask lives to the blend
            inside = self.b.buffer(self._shape, i1, "UB", "inside_ub")
            self.masks += 1
        zero = self.constant(0.0)
        e.compare("ge", position, zero, inside)
        e.compare("le", position, self.constant(float(size - 1)), high_ok)
        e.binary("vand", inside, high_ok, inside)
        e.select(inside, position, zero, position)
        if weight is None:
            return AxisTap(position, None, inside)
        e.select(inside, weight, zero, weight)
        return AxisTap(position, weight)


Weigh = Callable[[TapEmitter, Tile, Tile], None]
"""``weigh(taps, t, out)``: a tap's weight from the fraction ``t``."""


def _one_minus(taps: TapEmitter, t: Tile, out: Tile) -> None:
    taps.e.scalar("vmuls", t, -1.0, out)
    taps.e.scalar("vadds", out, 1.0, out)


def _same(taps: TapEmitter, t: Tile, out: Tile) -> None:
    taps.e.unary("vcopy", t, out)


_linear_weights: list[Weigh] = [_one_minus, _same]


def _keys(shift: float, sign: float, far: bool) -> Weigh:
    """Keys' cubic weight at ``d = shift + sign * t``: the far branch (``1 <= d < 2``)
    ``((a d - 5a) d + 8a) d - 4a`` or the near one (``d <= 1``) ``((a + 2) d - (a + 3))
    d^2 + 1``."""
    a = CUBIC_A

    def weigh(taps: TapEmitter, t: Tile, out: Tile) -> None:
        e = taps.e
        d = taps.temp("dist_ub")
        if sign == 1.0:
            taps.add(t, shift, d)
        else:
            e.scalar("vmuls", t, sign, d)
            taps.add(d, shift, d)
        if far:
            e.scalar("vmuls", d, a, out)
            e.scalar("vadds", out, -5 * a, out)
            e.binary("vmul", out, d, out)
            e.scalar("vadds", out, 8 * a, out)
            e.binary("vmul", out, d, out)
            e.scalar("vadds", out, -4 * a, out)
        else:
            e.scalar("vmuls", d, a + 2, out)
            e.scalar("vadds", out, -(a + 3), out)
            e.binary("vmul", out, d, out)
            e.binary("vmul", out, d, out)
            e.scalar("vadds", out, 1.0, out)

    return weigh


_cubic_weights: list[Weigh] = [
    _keys(1.0, 1.0, True),  # the tap at floor(c) - 1: d = t + 1
    _keys(0.0, 1.0, False),  # floor(c): d = t
    _keys(1.0, -1.0, False),  # floor(c) + 1: d = 1 - t
    _keys(2.0, -1.0, True),  # floor(c) + 2: d = 2 - t
]
