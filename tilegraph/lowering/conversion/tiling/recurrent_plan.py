"""The plan of a recurrent kernel (:mod:`.recurrent`): what the layer is, its tile sizes,
the weights it keeps in L1 and the cores it is shared over — or why it stays on the host.

``n1`` (hidden fractals per block) is the largest that fits L0C, L0B and the step's UB
tiles; shared over ``cores`` (``recurrent.cores``, :func:`choose_cores`) each core gets
``fractals(hidden) / cores`` fractals and ``n1`` divides them, so that no block writes
another core's columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute, SSAValue

from tilegraph.dialects.graph.quantized_recurrent import DynamicQuantizeLSTMStepsOp
from tilegraph.dialects.graph.recurrent import _TAKES_ALPHA, _TAKES_BETA, LSTMBase, RecurrentOp
from tilegraph.dialects.tile.base import element_bytes
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL
from tilegraph.lowering.conversion.tiling.matmul_block import fractals
from tilegraph.lowering.conversion.tiling.recurrent_weights import WeightShape, choose_resident

QUANTISED_K0 = 32
"""K elements per fractal row of int8 operands (16 x 32 fractals, as the int8 matmul's)."""

MAX_UNROLLED = 64
"""Hidden blocks x directions the kernel unrolls at most in a step's body (see
:func:`emit_recurrent_kernel`); wider layers stay on the host."""

_ACTIVATIONS = frozenset(("sigmoid", "tanh", "relu", "affine", "hardsigmoid"))

Activation = tuple[str, float | None, float | None]


def activations(
    op: RecurrentOp | DynamicQuantizeLSTMStepsOp, dirs: int
) -> list[list[Activation]] | str:
    """Per direction, the (name, alpha, beta) of each activation, as ONNX consumes them."""
    names = [str(n) for n in (op.attr("activations") or [])]
    names = names or list(op.DEFAULT_ACTIVATIONS * dirs)
    alphas = iter(float(a) for a in (op.attr("activation_alpha") or []))
    betas = iter(float(a) for a in (op.attr("activation_beta") or []))
    specs: list[Activation] = []
    for name in names:
        key = name.lower()
        if key not in _ACTIVATIONS:
            return f"the recurrent activation {name}"
        alpha = next(alphas, None) if key in _TAKES_ALPHA else None
        beta = next(betas, None) if key in _TAKES_BETA else None
        specs.append((key, alpha, beta))
    per = len(specs) // dirs
    return [specs[d * per : (d + 1) * per] for d in range(dirs)]


@dataclass(frozen=True)
class RecurrentPlan:
    op: RecurrentOp | DynamicQuantizeLSTMStepsOp
    x: SSAValue
    w: SSAValue
    r: SSAValue
    bias: SSAValue | None
    peephole: SSAValue | None
    h0: SSAValue | None
    c0: SSAValue | None
    y: SSAValue
    y_h: SSAValue
    y_c: SSAValue | None
    seq: int
    batch: int
    inputs: int
    hidden: int
    dirs: int
    m1: int
    n1: int
    """Hidden fractals per block (``Hb = 16·n1``)."""
    k1: int
    element: Attribute
    acts: list[list[Activation]]
    clip: float | None
    resident: list[WeightShape]
    """The weights held in L1 across the steps (:mod:`.recurrent_weights`)."""
    streams: str
    """Why the others stream from GM per step ("" when none does)."""
    cores: int = 1
    """Blocks (cores) the kernel is shared over, each computing ``per`` hidden blocks of
    every step (``recurrent.cores``)."""
    quantised: bool = False
    """The gate products are int8 x int8 into int32 (DynamicQuantizeLSTM's recurrence,
    :mod:`.quantized_recurrent_kernel`): ``x`` is then its input projection ``G`` and
    ``w`` unused."""
    rows_held: bool = False
    """The bias (and peephole) rows of the core's columns stay in UB across the steps,
    loaded once per direction (else every gate loads its rows from GM each step)."""
    accs: int = 1
    """UB accumulators the gates' fixpipes alternate between (2: the AIV's copy of a
    gate's sum out of the workspace need not wait for the vector work on the last one)."""
    y_cs: SSAValue | None = None
    """``graph.lstm_cells``' fourth result: the cell state after each step (stored as
    ``h`` is to ``Y``)."""
    projected: bool = False
    """The op has no ``W``: ``x`` is the input projection ``X·Wᵀ`` of every step
    (``hoist-recurrent-projection``), which the vector side adds to each gate's sum (``w``
    is then ``r``, unused)."""

    @property
    def k0(self) -> int:
        """K elements per fractal row of the cube's operands."""
        return QUANTISED_K0 if self.quantised else FRACTAL

    @property
    def per(self) -> int:
        """Hidden blocks of one core (its ``fractals(hidden) / cores`` fractals; with more
        than one core, ``n1`` divides them)."""
        return -(-(fractals(self.hidden) // self.cores) // self.n1)


def _ub_tiles(gates: int) -> int:
    """UB tiles of ``(batch, Hb)`` a step holds: the accumulator, the gates' and the
    states' tiles, the 4-D tile ``Y`` is stored from."""
    return {1: 3, 3: 6, 4: 5}[gates]


def plan_recurrent(body: KernelBody, op: RecurrentOp, b: KernelBuilder) -> RecurrentPlan | str:
    if int(op.attr("layout") or 0) != 0:
        return "a recurrent op with layout 1"
    if op.sequence_lens is not None:
        return "a recurrent op with sequence_lens"
    operands = {
        "X": op.X,
        "W": op.W,
        "R": op.R,
        "B": op.B,
        "initial_h": op.initial_h,
        "initial_c": op.initial_c if isinstance(op, LSTMBase) else None,
        "P": op.P if isinstance(op, LSTMBase) else None,
    }
    args = operand_sources(body, operands, "a recurrent")
    if isinstance(args, str):
        return args
    writes = {value: arg for value, arg in body.writes}
    outs = [writes.get(r) for r in op.results]
    if any(o is None for o in outs):
        return "a recurrent op whose Y, Y_h (Y_c) are not all kernel outputs (its state)"
    x_t = tensor_of(op.X)
    element = x_t.element_type
    if str(element) not in ("f32", "f16"):
        return f"a {element} recurrent op"
    seq, batch, inputs = (int(d) for d in x_t.origin_shape)
    dirs, hidden = (int(d) for d in tensor_of(op.Y).origin_shape[1::2])
    acts = activations(op, dirs)
    if isinstance(acts, str):
        return acts
    y, y_h, *rest = outs
    assert y is not None and y_h is not None
    projected = args["W"] is None
    if projected and seq == 1 and args["initial_h"] is None:
        return "a projected recurrent op of one step from a zero state (no cube work)"
    w_arg = args["R"] if projected else args["W"]
    assert w_arg is not None and args["R"] is not None
    layer = Shape(batch, inputs, hidden, dirs)
    chosen = layer_sizes(b, op.GATES, layer, element, args["P"] is not None, args["R"], w_arg,
                         projected)  # fmt: skip
    if isinstance(chosen, str):
        return chosen
    sizes, held, accs = chosen
    return RecurrentPlan(
        op, args["X"], w_arg, args["R"], args["B"], args["P"], args["initial_h"],  # type: ignore[arg-type]
        args["initial_c"], y, y_h, rest[0] if rest else None, seq, batch, inputs, hidden,
        dirs, *sizes.tiles, element, acts, op.attr("clip"), sizes.resident, sizes.streams,  # type: ignore[arg-type]
        sizes.cores, rows_held=held, accs=accs, y_cs=rest[1] if len(rest) > 1 else None,
        projected=projected,
    )  # fmt: skip


def layer_sizes(
    b: KernelBuilder, gates: int, layer: Shape, element: Attribute, peephole: bool,
    r: SSAValue, w: SSAValue, projected: bool,
) -> tuple[Sizes, bool, int] | str:  # fmt: skip
    """The sizes of a float recurrent kernel (``layer.inputs``: ``X``'s width), whether
    it holds its constant rows in UB and its accumulators (1 or 2) — or why it cannot
    run. ``projected``: the step's only matmul is ``h·Rᵀ`` (K = hidden) and ``G_t`` takes
    one more UB tile."""
    rows = _held_rows(gates, peephole)
    row_bytes = rows * aligned_bytes(b.hw, "UB", 4 * FRACTAL * fractals(layer.hidden))
    k_in = layer.hidden if projected else layer.inputs

    def sized(held: bool, accs: int) -> Sizes | str:
        return size_recurrent(
            b, gates, Shape(layer.rows, k_in, layer.hidden, layer.dirs), element,
            row_bytes if held else 0, r, w, _ub_tiles(gates) + accs - 1 + projected,
            projected=projected,
        )  # fmt: skip

    # the constant rows held in UB and a second accumulator where they fit beside the
    # widest hidden blocks; else what does (the rows loaded per step, one accumulator)
    plain = sized(False, 1)
    held, accs, sizes = False, 1, plain
    for held, accs in ((True, 2), (False, 2), (False, 1)):
        sizes = sized(held, accs)
        if not isinstance(sizes, str) and (
            isinstance(plain, str) or sizes.tiles[1] == plain.tiles[1]
        ):
            break
    if isinstance(sizes, str):
        return sizes
    return sizes, held, accs


def _held_rows(gates: int, peephole: bool) -> int:
    """Rows a step reads that do not change over the steps: the ``2 · gates`` bias rows
    (``Wb``, ``Rb``) and LSTM's 3 peephole rows."""
    return 2 * gates + (3 if peephole else 0)


def operand_sources(
    body: KernelBody, operands: dict[str, SSAValue | None], what: str
) -> dict[str, SSAValue | None] | str:
    """The GM argument of each (optional) operand, or why not: one computed inside the
    kernel (``what`` names the op in the reason)."""
    args: dict[str, SSAValue | None] = {}
    for name, value in operands.items():
        args[name] = None if value is None else body.source(value)
        if value is not None and args[name] is None:
            return f"{what} {name} computed inside the kernel"
    return args


@dataclass(frozen=True)
class Shape:
    """A recurrent layer's sizes: the batch rows the cube's A tile holds, the input size
    (the K of ``W``), the hidden size, the directions."""

    rows: int
    inputs: int
    hidden: int
    dirs: int


@dataclass(frozen=True)
class Sizes:
    tiles: tuple[int, int, int]
    """(m1, n1, k1)."""
    resident: list[WeightShape]
    streams: str
    cores: int


def size_recurrent(
    b: KernelBuilder,
    gates: int,
    s: Shape,
    element: Attribute,
    ub_fixed: int,
    r_arg: SSAValue,
    w_arg: SSAValue,
    ub_tiles: int | None = None,
    quantised: bool = False,
    l1_fixed: int = 0,
    projected: bool = False,
) -> Sizes | str:
    """The tile sizes, cores and resident weights of a recurrent kernel (see the module
    docstring): ``ub_tiles`` tiles of ``(batch, Hb)`` (default :func:`_ub_tiles` of
    ``gates``) and ``ub_fixed`` bytes besides them in UB, ``l1_fixed`` bytes of L1
    besides the matmul tiles and the resident weights; ``quantised``: int8 operands
    (16 x 32 fractals) into an int32 accumulator; ``projected``: the input projection is
    computed apart (``R`` the only weight)."""
    hw = b.hw
    k0 = QUANTISED_K0 if quantised else FRACTAL
    cube = 1 if quantised else element_bytes(b.cube_element(element))
    frac_in = FRACTAL * k0 * cube
    m1 = fractals(s.rows)
    l0a, l0b, l0c = (hw.capacity(x) // 2 for x in ("L0A", "L0B", "L0C"))
    tile_bytes = element_bytes(element) * m1 * FRACTAL * FRACTAL
    tiles = ub_tiles if ub_tiles is not None else _ub_tiles(gates)
    rows = gates * 2 + 3  # bias / peephole rows, a fraction of a tile each
    hidden_fractals = fractals(s.hidden)
    cores = choose_cores(b, hidden_fractals)
    share = hidden_fractals // cores  # hidden fractals of one core

    def ub_need(n1: int) -> int:
        return tiles * n1 * tile_bytes + rows * n1 * FRACTAL * 4 + ub_fixed

    n1 = share
    while n1 > 1 and (
        m1 * n1 * FRACTAL * FRACTAL * 4 > l0c or n1 * frac_in > l0b or ub_need(n1) > hw.ub_bytes
    ):
        n1 = -(-n1 // 2)
    if cores > 1:  # a core's blocks stay within its columns (the others' are theirs to write)
        n1 = max(d for d in range(1, n1 + 1) if share % d == 0)
    k_fractals = max(-(-s.inputs // k0), -(-s.hidden // k0))
    k1 = min(k_fractals, l0a // (m1 * frac_in), l0b // (n1 * frac_in))
    if k1 < 1 or m1 * n1 * FRACTAL * FRACTAL * 4 > l0c:
        return "a recurrent op whose batch does not fit one L0 tile"
    if ub_need(n1) > hw.ub_bytes:
        return "a recurrent op whose step tiles do not fit UB"
    if s.dirs * -(-share // n1) > MAX_UNROLLED:
        return f"a recurrent op of over {MAX_UNROLLED} unrolled hidden blocks x directions"
    columns = share * FRACTAL
    r_shape = WeightShape("r", r_arg, s.hidden)
    w_shape = WeightShape("w", w_arg, s.inputs)
    streamed = (m1 + n1) * k1 * frac_in  # the A and streamed B tiles in L1
    free = hw.capacity("L1") - 2 * streamed - l1_fixed  # and their second slots
    weights = (min(columns, s.hidden), gates, s.dirs, cube)
    only_r = quantised or projected
    choice, streams = choose_resident(b, r_shape, w_shape, weights, free, k0, only_r)
    resident = {"none": [], "R": [r_shape], "RW": [r_shape, w_shape]}[choice]
    return Sizes((m1, n1, k1), resident, streams, cores)


CORES_PARAM = "recurrent.cores"
"""Tiling parameter: the blocks (cores) a recurrent kernel is shared over."""


def choose_cores(b: KernelBuilder, hidden_fractals: int) -> int:
    """``recurrent.cores``: how many cores share each step's ``hidden_fractals`` fractals
    of gate columns (16 hidden columns each, of every gate) — a divisor of them (every core
    gets as many, none nothing) up to the preset's cube cores (on a decoupled preset, its
    core groups); default the most."""
    limit = min(b.hw.cube_cores, hidden_fractals)
    legal = [n for n in range(1, limit + 1) if hidden_fractals % n == 0]
    return b.choose_int(
        CORES_PARAM,
        legal,
        legal[-1],
        "cores sharing a recurrent layer's gate columns (all-core barrier per time step)",
    )
