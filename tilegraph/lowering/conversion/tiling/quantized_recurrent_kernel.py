"""DynamicQuantizeLSTM's recurrence (``graph.dynamic_quantize_lstm_steps``) as one kernel:
the float LSTM kernel's time loop, gate matmuls and cell (:mod:`.recurrent`), with the gate
product ``h_{t-1}·(R - R_zp)`` on the int8 cube in the re-centred form of
:mod:`.quantized_recurrent`, and the step's input projection ``G_t`` (computed apart, by
``expand-quantized-lstm``) read by the vector side instead of a matmul of ``x_t``.

Per direction and step (``t`` forwards or backwards by direction, as the float kernel)::

    [AIV]  h = h_{t-1}  (initial_h[d] at step 0, else Y[t-1, d]: every core reads it all;
                         step 0 without initial_h has no product: h is 0)
           lo = min(min(h), 0), hi = max(max(h), 0)      vreduce over the whole batch
           scale, zp  (DynamicQuantizeLinear's float32 program, round half to even)
           q = clip(rint(h / scale) + zp, 0, 255);  u = q - 128 -> int8 -> workspace[core]
           rows = Σ_k u (exact in float32, then int32);  a = 128 - zp (int32)
           [set STATE_FLAG]                               decoupled presets
    [AIC]  [wait STATE_FLAG];  u (with the ones row) GM -> L1 once
           per hidden block, per gate g: mmad u·v_g (int8 x int8 -> int32 L0C) -> fixpipe
    [AIV]  total = acc + b·rows + a·(S + K·b)      int32, exact (K <= MAX_HIDDEN)
           P = float32(total) · (scale · R_scale[g-columns])
           gate = ((G_t[g-columns] + P) + peephole·c) + (Wb + Rb)   the reference's order
           the LSTM cell (clip, activations, input_forget) as the float kernel
           store h_t to Y[t, d], Y_h[d]; c_t to Y_c[d]
           all-core barrier (the next step's quantisation reads the whole h_t)

``v = R`` is int8 ``[dirs, 4H, H]`` (the op holds ``R`` so: a uint8 ``R`` is re-centred by
the pass with its zero point), ``b = -R_zp`` (loaded per direction), so ``(q - zp)·(R -
R_zp) = (u + a)·(v + b)``. ``S`` (the column sums of ``v``) costs nothing: the cube's A
tile holds one more row than the batch, a constant row of ones written once into the
workspace, so row ``batch`` of every accumulator tile is ``Σ_k v[k, n]``. Padding: ``u``
is stored as exactly ``[batch, H]`` (the ones row after it), and ``nd2nz`` pads K past
``H`` with zeros on both operands. The float32 conversion and the scale product are the
reference's (:func:`~tilegraph.dialects.graph.quantized_recurrent.quantized_product`), so
the kernel equals the op's reference bit for bit.

``h_{t-1}`` is re-quantised by every core (its range is the whole batch's): each core
writes its own ``u`` into its region of the workspace (``[cores, batch + 1, H]`` int8) and
shares only the hidden columns of the gates, as the float kernel does.

Host (with the reason): ``R_scale`` not ``[dirs, 4H]`` (the pass always gives it so),
a hidden size over :data:`~.quantized_recurrent.MAX_HIDDEN`, one step from a zero state
(no gate product: no cube work), and the float kernel's limits (batch, UB, unrolling).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.quantized_recurrent import DynamicQuantizeLSTMStepsOp
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    CopyOp,
    Nd2NzOp,
    memref_shape,
)
from tilegraph.dialects.tile.base import scoped_memref
from tilegraph.lowering.analysis.buffers import aligned_bytes
from tilegraph.lowering.conversion.kernel_body import KernelBody, tensor_of
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL
from tilegraph.lowering.conversion.tiling.dynamic_quantize import parameters, quantize_values
from tilegraph.lowering.conversion.tiling.held_rows import HeldRows, RowKey
from tilegraph.lowering.conversion.tiling.matmul_block import fractals
from tilegraph.lowering.conversion.tiling.mix import add_workspace_argument
from tilegraph.lowering.conversion.tiling.quantized_recurrent import CENTRE, MAX_HIDDEN
from tilegraph.lowering.conversion.tiling.recurrent import _Emitter
from tilegraph.lowering.conversion.tiling.recurrent_plan import (
    QUANTISED_K0,
    RecurrentPlan,
    Shape,
    activations,
    operand_sources,
    size_recurrent,
)
from tilegraph.lowering.conversion.tiling.recurrent_steps import run_steps
from tilegraph.lowering.conversion.tiling.recurrent_weights import k_fractals
from tilegraph.lowering.conversion.tiling.reduction_chunks import vreduce
from tilegraph.lowering.conversion.tiling.vector_emitter import VectorEmitter

_ROW_KINDS = ("r_scale", "bias", "peephole")

UB_TILES = 6
"""UB tiles of ``(batch, Hb)`` a step holds: the int32 accumulator, the float32 product,
the cell's three (two gates and ``c``) and the 4-D tile ``Y`` is stored from."""

WORKSPACE_NAME = "u_workspace"


@dataclass(frozen=True)
class QuantizedPlan:
    """The float recurrent plan (``quantised``) and the operands only this kernel reads."""

    p: RecurrentPlan
    r_scale: SSAValue
    """``[dirs, 4H]`` float32."""
    r_zero: SSAValue
    """``[dirs]`` (or ``[dirs, 4H]``) int8: the direction's first is used."""
    held: bool
    """The constant rows (R_scale, Wb + Rb, peepholes) stay in UB across the steps, loaded
    once per direction (else each step loads them)."""


def _quantise_bytes(b: KernelBuilder, batch: int, hidden: int) -> int:
    """UB bytes of the quantisation's tiles: ``h`` (3-D and 4-D float32), ``u`` (int8), the
    ones row, the row sums and the one-element tiles."""
    ub = b.hw
    state = aligned_bytes(ub, "UB", 4 * batch * hidden)
    return (
        2 * state
        + aligned_bytes(ub, "UB", batch * hidden)
        + aligned_bytes(ub, "UB", hidden)
        + 4 * aligned_bytes(ub, "UB", 4 * (batch + FRACTAL))
        + 16 * aligned_bytes(ub, "UB", 4)
    )


def _rows_bytes(b: KernelBuilder, hidden: int) -> int:
    """UB bytes of the constant rows held across the steps (R_scale, Wb + Rb and the
    peepholes of every gate: 11 rows of the core's columns — all of them at most)."""
    return 11 * aligned_bytes(b.hw, "UB", 4 * FRACTAL * fractals(hidden))


def plan_quantized_recurrent(
    body: KernelBody, op: DynamicQuantizeLSTMStepsOp, b: KernelBuilder
) -> QuantizedPlan | str:
    operands = {
        "G": op.G, "R": op.R, "B": op.B, "initial_h": op.initial_h,
        "initial_c": op.initial_c, "P": op.P, "R_scale": op.R_scale,
        "R_zero_point": op.R_zero_point,
    }  # fmt: skip
    args = operand_sources(body, operands, "a quantised recurrent")
    if isinstance(args, str):
        return args
    writes = dict(body.writes)
    y, y_h, y_c = (writes.get(r) for r in op.results)
    if y is None or y_h is None or y_c is None:
        return "a quantised recurrence whose Y, Y_h, Y_c are not all kernel outputs (its state)"
    seq, batch, _ = (int(d) for d in tensor_of(op.G).origin_shape)
    dirs, hidden = (int(d) for d in tensor_of(op.Y).origin_shape[1::2])
    r_scale, r_zero, g, r = args["R_scale"], args["R_zero_point"], args["G"], args["R"]
    assert r_scale is not None and r_zero is not None and g is not None and r is not None
    if tuple(memref_shape(r_scale)) != (dirs, 4 * hidden):
        return "a quantised recurrence whose R_scale is not [dirs, 4H]"
    if hidden > MAX_HIDDEN:
        return f"a quantised recurrence of hidden size over {MAX_HIDDEN} (int32 correction)"
    if seq == 1 and args["initial_h"] is None:
        return "a quantised recurrence of one step from a zero state (no gate product)"
    acts = activations(op, dirs)
    if isinstance(acts, str):
        return acts
    shape = Shape(batch + 1, hidden, hidden, dirs)
    u_l1 = k_fractals(hidden, QUANTISED_K0) * fractals(batch + 1) * FRACTAL * QUANTISED_K0
    fixed = _quantise_bytes(b, batch, hidden)
    # the constant rows held across the steps where they fit, else loaded per step
    for held in (True, False):
        sizes = size_recurrent(
            b, op.GATES, shape, f32, fixed + (_rows_bytes(b, hidden) if held else 0), r, r,
            UB_TILES, quantised=True, l1_fixed=u_l1,
        )  # fmt: skip
        if not isinstance(sizes, str):
            break
    if isinstance(sizes, str):
        return sizes
    m1, n1, k1 = sizes.tiles
    p = RecurrentPlan(
        op, g, r, r, args["B"], args["P"], args["initial_h"], args["initial_c"], y, y_h, y_c,
        seq, batch, hidden, hidden, dirs, m1, n1, k1, f32, acts, op.attr("clip"),
        sizes.resident, sizes.streams, sizes.cores, quantised=True,
    )  # fmt: skip
    return QuantizedPlan(p, r_scale, r_zero, held)


def emit_quantized_recurrent_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone ``graph.dynamic_quantize_lstm_steps`` (see the module docstring); why
    not, else None."""
    (op,) = body.ops
    assert isinstance(op, DynamicQuantizeLSTMStepsOp)
    q = plan_quantized_recurrent(body, op, b)
    if isinstance(q, str):
        return q
    if b.dry_run:
        return None
    _Steps(q, b, body).emit(str(op.attr("direction") or "forward"))
    return None


class _Steps:
    """The quantisation program, the corrected gate sums and the LSTM cell, around the
    float kernel's emitter."""

    def __init__(self, q: QuantizedPlan, b: KernelBuilder, body: KernelBody):
        self.q, self.p, self.b = q, q.p, b
        p = q.p
        self.e = e = _Emitter(p, b)
        self.v = VectorEmitter(b, e.acc, [])
        i8 = element_type_of("int8")
        batch, hidden, mp, hb = p.batch, p.hidden, p.m1 * FRACTAL, e.hb
        ws_type = scoped_memref([p.cores, batch + 1, hidden], i8, "GM")
        self.ws = add_workspace_argument(body.fn, ws_type)
        self.ws.name_hint = WORKSPACE_NAME
        buf = b.buffer
        self.h3 = buf([1, batch, hidden], f32, "UB", "h_ub")
        self.h4 = buf([1, 1, batch, hidden], f32, "UB", "h_y_ub")
        self.u = buf([1, batch, hidden], i8, "UB", "u_ub")
        self.u_l1 = buf([k_fractals(hidden, p.k0), p.m1, FRACTAL, p.k0], i8, "L1", "u_l1")
        self.ones = buf([1, 1, hidden], i8, "UB", "ones_ub")
        one = [1, 1]
        self.lo, self.hi, self.part, self.scale, self.safe, self.tmp, self.a_f = (
            buf(one, f32, "UB", f"{n}_ub")
            for n in ("lo", "hi", "zero_point", "scale", "safe_scale", "tmp", "a")
        )
        self.extreme = buf([], f32, "UB", "extreme_ub")
        self.a = buf(one, i32, "UB", "a_i32_ub")
        self.zero8 = buf([1], i8, "UB", "r_zero_ub")
        self.wb = buf([1, 1, 1], i32, "UB", "b_ub")
        self.kb = buf([1, 1, 1], i32, "UB", "kb_ub")
        self.rows = buf([1, batch, 1], f32, "UB", "rows_ub")
        self.rows_m = buf([1, mp, 1], f32, "UB", "rows_tile_ub")
        self.brow = buf([1, mp, 1], i32, "UB", "b_rows_ub")
        self.srow = buf([1, 1, hb], i32, "UB", "column_sums_ub")
        self.prod = buf([1, mp, hb], f32, "UB", "product_ub")
        self.sc = buf([1, hb], f32, "UB", "step_scale_ub")
        self.row2 = buf([1, hb], f32, "UB", "row2_ub")
        # each gate's and block's constant rows: held across the steps (loaded per
        # direction) when they fit, else loaded into these scratch rows where used
        scratch = {k: buf([1, hb], f32, "UB", f"{k}_ub") for k in _ROW_KINDS}
        self.held = HeldRows(b, hb, f32, scratch, self._load_row)
        kinds = ["r_scale"] + (["bias"] if p.bias is not None else [])
        kinds += ["peephole"] if p.peephole is not None else []
        for k, col in enumerate(e.cols if q.held else []):
            for g in range(4):
                for kind in kinds:
                    if kind != "peephole" or g < 3:
                        self.held.hold((kind, g, col), f"{kind}_{g}_{k}_ub")

    # ---- per kernel and per direction ------------------------------------------------
    def _ones_row(self) -> None:
        """The A tile's row ``batch``: ones, so the accumulator's row ``batch`` is ``S``."""
        b = self.b
        zero = b.index(0)
        self.v.fill(self.ones, 1.0)
        b.add(CopyOp(self.ones, [zero] * 3, self.ws, [self._core(), b.index(self.p.batch), zero]))

    def _core(self) -> SSAValue:
        return self.e.block if self.e.block is not None else self.b.index(0)

    def _direction(self, d: int) -> None:
        """``b = -R_zp[d]`` and ``K·b`` (int32) for the direction's corrections."""
        b, v = self.b, self.v
        zero = b.index(0)
        self.e.open_nest()
        lead = [b.index(d)] + [zero] * (len(memref_shape(self.q.r_zero)) - 1)
        b.add(CopyOp(self.q.r_zero, lead, self.zero8, [zero]))
        v.cast(self.zero8, self.wb, "rint")
        v.scalar("vmuls", self.wb, -1.0, self.wb)
        v.scalar("vmuls", self.wb, float(self.p.hidden), self.kb)
        self.e.close_nest()
        self.e.open_nest()
        self.held.load_held(d)
        self.e.close_nest()

    def _load_row(self, key: RowKey, d: int, row: SSAValue) -> None:
        """Gate ``g``'s ``kind`` row of direction ``d`` on the block at ``col`` (``key``)
        into ``row``: R_scale's, the peephole's, or ``Wb + Rb`` (as the reference sums
        them)."""
        kind, g, col = key
        b, p, hidden = self.b, self.p, self.p.hidden
        zero = b.index(0)
        at = b.add_index(col, b.index(g * hidden)) if g else col
        if kind == "r_scale":
            b.add(CopyOp(self.q.r_scale, [b.index(d), at], row, [zero, zero]))
        elif kind == "peephole":
            assert p.peephole is not None
            b.add(CopyOp(p.peephole, [b.index(d), at], row, [zero, zero]))
        else:
            assert p.bias is not None
            r_at = b.add_index(col, b.index(4 * hidden + g * hidden))
            b.add(CopyOp(p.bias, [b.index(d), at], self.row2, [zero, zero]))
            b.add(CopyOp(p.bias, [b.index(d), r_at], row, [zero, zero]))
            self.v.binary("vadd", self.row2, row, row)

    # ---- per step ---------------------------------------------------------------------
    def _quantise(self, d: int, prev: SSAValue | None) -> None:
        """h_{t-1} quantised by its own range into ``u`` (the workspace), its row sums
        times ``b`` (``brow``), ``a = 128 - zp`` and the scale (``safe``)."""
        b, v, p = self.b, self.v, self.p
        zero = b.index(0)
        self.e.open_nest()
        if prev is None:
            assert p.h0 is not None
            b.add(CopyOp(p.h0, [b.index(d), zero, zero], self.h3, [zero] * 3))
        else:  # Y[t-1, d]: 4-D, its leading axis dropped by a one-element sum (exact)
            b.add(CopyOp(p.y, [prev, b.index(d), zero, zero], self.h4, [zero] * 4))
            vreduce(b, "sum", self.h4, self.h3, (0,))
        for kind, acc in (("min", self.lo), ("max", self.hi)):
            v.fill(acc, 0.0)  # the range includes 0
            vreduce(b, kind, self.h3, self.extreme, (0, 1, 2))
            v.binary(f"v{kind}", acc, self.extreme, acc)
        zp = parameters(v, self.lo, self.hi, (self.part, self.scale, self.safe, self.tmp))
        quantize_values(v, self.h3, self.safe, zp, (0, 255), self.h3)
        v.scalar("vadds", self.h3, -float(CENTRE), self.h3)  # u = q - 128, exact
        v.cast(self.h3, self.u, "rint")
        b.add(CopyOp(self.u, [zero] * 3, self.ws, [self._core(), zero, zero]))
        # b · Σ_k u (the sum exact in float32: |Σ| <= 128 K < 2**24)
        vreduce(b, "sum", self.h3, self.rows, (2,))
        b.add(CopyOp(self.rows, [zero] * 3, self.rows_m, [zero] * 3))
        v.cast(self.rows_m, self.brow, "rint")
        v.binary("vmul", self.brow, self.wb, self.brow)
        # a = 128 - zp
        v.scalar("vmuls", zp, -1.0, self.a_f)
        v.scalar("vadds", self.a_f, float(CENTRE), self.a_f)
        v.cast(self.a_f, self.a, "rint")

    def _u_to_l1(self) -> None:
        """The step's ``u`` (and the ones row) GM -> L1 once: every gate and hidden block
        of the step reads its fractals from there."""
        b = self.b
        zero = b.index(0)
        with b.loop_over(zero, b.index(1), b.index(1), "u"):  # a nest: slotted events
            b.add(Nd2NzOp(self.ws, [self._core(), zero, zero], self.u_l1))

    def _gate_sum(self, g: int, dst: SSAValue, d: int, t: SSAValue, col: SSAValue,
                  has_h: bool, c: SSAValue | None) -> None:  # fmt: skip
        """``dst = ((G_t + P) + peephole · c) + (Wb + Rb)`` of gate ``g`` on this hidden
        block (``P`` the corrected, dequantised product; none without ``h_{t-1}``)."""
        b, v, p, e = self.b, self.v, self.p, self.e
        zero = b.index(0)
        hidden = p.hidden
        if has_h:
            e.gate(g, d, col, [(self.u_l1, None, p.r, hidden)])
        else:
            e.close_nest()
            e.open_nest()
        g_col = b.add_index(col, b.index(d * 4 * hidden + g * hidden))
        b.add(CopyOp(p.x, [t, zero, g_col], dst, [zero] * 3))
        if has_h:
            acc = e.acc
            b.add(CopyOp(acc, [zero, b.index(p.batch), zero], self.srow, [zero] * 3))
            v.binary("vadd", self.srow, self.kb, self.srow)  # S + K·b
            v.binary("vmul", self.srow, self.a, self.srow)  # a·(S + K·b)
            v.binary("vadd", acc, self.srow, acc)
            v.binary("vadd", acc, self.brow, acc)  # + b·Σu: the exact int32 total
            v.cast(acc, self.prod, "rint")
            v.binary("vmul", self.safe, self.held.row(("r_scale", g, col), d), self.sc)
            v.binary("vmul", self.prod, self.sc, self.prod)
            v.binary("vadd", dst, self.prod, dst)
        if p.peephole is not None and c is not None:
            v.binary("vmul", c, self.held.row(("peephole", g, col), d), self.prod)
            v.binary("vadd", dst, self.prod, dst)
        if p.bias is not None:
            v.binary("vadd", dst, self.held.row(("bias", g, col), d), dst)  # + (Wb + Rb)

    def _lstm_block(self, d: int, t: SSAValue, col: SSAValue, has_h: bool, first: bool) -> None:
        """One hidden block of a step: the four gate sums and ONNX LSTM's cell in the
        reference's order (:func:`~tilegraph.dialects.graph.recurrent.lstm_cell`)."""
        b, p, e = self.b, self.p, self.e
        t1, t2, c = e.t["t1"], e.t["t2"], e.t["c"]
        f, g, hact = p.acts[d]
        e.load_state(p.c0 if first else p.y_c, d, col, c)
        self._gate_sum(0, t1, d, t, col, has_h, c)  # i
        e.activate(t1, f)
        if p.op.attr("input_forget"):  # f = 1 - i
            b.add(SCALAR_OPS["vmuls"](t1, -1.0, t2))
            b.add(SCALAR_OPS["vadds"](t2, 1.0, t2))
        else:
            self._gate_sum(2, t2, d, t, col, has_h, c)
            e.activate(t2, f)
        b.add(BINARY_OPS["vmul"](t2, c, c))
        self._gate_sum(3, t2, d, t, col, has_h, None)  # c candidate
        e.activate(t2, g)
        b.add(BINARY_OPS["vmul"](t1, t2, t1))
        b.add(BINARY_OPS["vadd"](c, t1, c))
        self._gate_sum(1, t1, d, t, col, has_h, c)  # o, its peephole on the new c
        e.activate(t1, f)
        b.add(UNARY_OPS["vcopy"](c, t2))
        e.activate(t2, hact, clip=False)
        b.add(BINARY_OPS["vmul"](t1, t2, t1))
        e.store_y(t1, t, d, col)
        e.store_state(t1, p.y_h, d, col)
        assert p.y_c is not None  # the plan requires every state output
        e.store_state(c, p.y_c, d, col)

    def emit(self, direction: str) -> None:
        e, p = self.e, self.p
        self._ones_row()

        def step(d: int, t: SSAValue, prev: SSAValue | None) -> None:
            has_h = prev is not None or p.h0 is not None
            if has_h:
                self._quantise(d, prev)
                e.hand_over()  # u stored: the AIC may multiply
                e.wait_state()
                self._u_to_l1()
            for col in e.cols:
                self._lstm_block(d, t, col, has_h, prev is None)
                e.close_nest()
            e.barrier()  # every core's h_t stored before any quantises it

        run_steps(e, direction, step, begin=self._direction)
