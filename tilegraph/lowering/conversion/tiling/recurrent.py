"""Recurrent layers (``graph.rnn`` / ``graph.gru`` / ``graph.lstm``) as one kernel: a loop
over time steps of cube matmuls (the gates) and vector programs (the cell), as GE's
DynamicRNN runs them.

Per direction, per time step ``t`` and per block of ``Hb`` hidden columns (``j``), each gate
``g`` is one accumulation in L0C of ``x_t·W_gᵀ`` and ``h_{t-1}·R_gᵀ`` (DynamicRNN's
concatenated ``[x_t, h_{t-1}]·W`` form: no GM intermediate of ``seq x 4H``), taken out by
``fixpipe`` into one UB accumulator tile; the vector unit adds the biases, clips, applies
the op's activations and updates the cell. A layer without ``W`` (``projected``: its
``X`` is ``X·Wᵀ`` of all steps, one matmul computed apart by
``hoist-recurrent-projection`` where ``W`` would stream per step) multiplies only
``h_{t-1}·R_gᵀ``; the vector side copies the gate's columns of ``G_t`` from GM and adds
them (a gate with no matmul — step 0 from a zero state — is that copy alone)::

    for d in directions:                      # reverse: t = seq - 1 - s
      copy R[d] (and W[d]) GM -> L1 once      # when they fit (.recurrent_weights)
      step s = 0 (peeled: h_{-1} is initial_h, or zero and its matmul is skipped)
      scf.for s in 1 .. seq-1:                # the time loop: s drives x_t, Y[t-1], Y[t]
        [wait "h_{t-1} stored"]               # decoupled presets: AIV -> AIC flag
        for j in hidden blocks:               (unrolled: a few)
          for g in gates: mmad x_t·W_g[j]ᵀ (+ h_{t-1}·R_g[j]ᵀ) -> fixpipe -> UB -> vector
          store h_t[j] to Y[t, d] (and Y_h[d]), c_t[j] to Y_c[d]
        [set "h_t stored"]

The IR does not grow with the sequence: each gate's K loops and the vector work after each
fixpipe are loop nests of their own in the time loop's body, which inject-sync fences apart
(a body holding every gate's loads would need more than its 8 events per pipe pair). The
weights the plan keeps in L1 are read from GM once per kernel, each K step moving only its
fractals L1 -> L0B; the others stream GM -> L1 -> L0B per step. A step's ``A`` rows
(``x_t``, fetched before the state wait, and ``h_{t-1}``) go to L0A once and serve every
gate (:mod:`.recurrent_operands`); the bias rows stay in UB (``rows_held``); on a decoupled
preset the gates' hand-overs alternate the workspace slots (:data:`.mix.ALTERNATE_ATTR`).

**State.** ``h`` lives in GM: the cube reads ``h_{t-1}`` from ``Y[t-1, d]`` (``Y`` is the
double buffer: step ``t`` writes ``Y[t]`` while the matmuls read ``Y[t-1]``), the vector
side reads it from ``Y_h[d]`` (GRU), which it rewrites block by block (each block only
reads and writes its own columns). LSTM's ``c`` lives in ``Y_c[d]`` (vector only). GRU with
``linear_before_reset = 0`` needs ``r ⊙ h_{t-1}`` as a matmul operand: a first pass over
the blocks writes it to ``Y[t, d]``, a second computes ``z``, ``n`` and ``h_t`` into
``Y_h[d]``, and a third copies ``Y_h[d]`` to ``Y[t, d]``.

**Outputs.** One kernel writes ``Y``, ``Y_h`` (and ``Y_c``): all three must be outputs of
the kernel (the state lives in them). ``graph.lstm_cells`` (an LSTM under ``sequence_lens``
whose ``Y_c`` is read, ``expand-recurrent-lengths``) also stores each step's ``c`` to its
``Y_cs`` as ``h`` goes to ``Y``. **Decoupled presets** (910B, ``test``): the kernel is
split into a mix kernel (:mod:`.mix`): the fixpipes become the workspace hand-over, and the
back edge (the AIV stored ``h_t``, the AIC may read it) is the cross-core flag
:data:`STATE_FLAG`, set by the AIV after each step's stores and waited for by the AIC
before each step's matmuls. The AIV part does not share a tile out between the AIVs of a
group, so the launch gets one AIV per group
(:func:`~tilegraph.dialects.tile.cores.aivs_per_group`): two running the same part would
each rewrite ``Y_h`` / ``Y_c`` in place while the other has yet to read them.

**Over the cores** (``recurrent.cores``, :func:`.recurrent_plan.choose_cores`): the hidden
size's fractals are shared out, ``fractals(hidden) / cores`` to each block, whose
``tile.block_idx`` gives its first column; each block keeps its columns of the resident
weights in L1, computes its columns of every gate and its slice of ``c`` / ``h``, stores
its ``h`` slice, and waits at ``tile.sync_all`` (:meth:`_Emitter.barrier`: the AIVs'
hard barrier before the state flag on a decoupled preset, the AI cores' soft one on a
coupled preset) before any block reads the whole ``h_t``; GRU without
``linear_before_reset`` has a second barrier before its copy-back pass (the other blocks'
``n`` gate still reads ``Y[t]``). The launch gets ``cores`` blocks (``builder.blocks``).

Host (with the reason): ``layout = 1``, ``sequence_lens`` (rewritten away before), activations
other than Sigmoid, Tanh, Relu, Affine, HardSigmoid, a batch over one L0 tile, weights
computed in the kernel, more than :data:`.recurrent_plan.MAX_UNROLLED` hidden blocks x directions.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import SSAValue

from tilegraph.dialects.element_types import element_type_of
from tilegraph.dialects.graph.recurrent import (
    GRUOp,
    LSTMBase,
    RecurrentOp,
)
from tilegraph.dialects.tile import (
    BINARY_OPS,
    SCALAR_OPS,
    UNARY_OPS,
    BlockIdxOp,
    CopyOp,
    DupOp,
    FixpipeOp,
    Load2dOp,
    MmadOp,
    Nd2NzOp,
    SyncAllOp,
    SyncBlockSetOp,
    SyncBlockWaitOp,
)
from tilegraph.lowering.conversion.kernel_body import KernelBody
from tilegraph.lowering.conversion.tiling.builder import KernelBuilder
from tilegraph.lowering.conversion.tiling.cube import FRACTAL, accumulator_type
from tilegraph.lowering.conversion.tiling.held_rows import HeldRows, RowKey
from tilegraph.lowering.conversion.tiling.mix import ALTERNATE_ATTR
from tilegraph.lowering.conversion.tiling.recurrent_operands import StepOperands
from tilegraph.lowering.conversion.tiling.recurrent_plan import (
    Activation,
    RecurrentPlan,
    plan_recurrent,
)
from tilegraph.lowering.conversion.tiling.recurrent_steps import run_steps
from tilegraph.lowering.conversion.tiling.recurrent_weights import GateWeights, k_fractals

STATE_FLAG = 4
"""Cross-core flag: the AIV stored a step's state (AIV -> AIC); after :mod:`.mix`'s
ready (0, 1) and free (2, 3) flags."""

QUANTIZED_LSTM_HOST_REASON = (
    "DynamicQuantizeLSTM outside int8: expand-quantized-lstm splits it into its input "
    "projection and its recurrence (each an AI-core kernel) under --precision int8 only"
)
"""Why ``graph.dynamic_quantize_lstm`` (unexpanded: any precision but ``int8``, or weights
that are not constants) stays on the host; under ``int8`` its recurrence is
:mod:`.quantized_recurrent_kernel`'s kernel."""


class _Emitter:
    """Emits one recurrent kernel from its plan (buffers allocated once)."""

    def __init__(self, p: RecurrentPlan, b: KernelBuilder):
        self.p, self.b = p, b
        self.coupled = b.hw.coupled
        el = p.element
        cube = element_type_of("int8") if p.quantised else b.cube_element(el)
        hb, mp, k0 = p.n1 * FRACTAL, p.m1 * FRACTAL, p.k0
        self.hb = hb
        self.a_l1 = b.buffer([p.k1, p.m1, FRACTAL, k0], cube, "L1", "a_l1")
        self.b_l1 = b.buffer([p.k1, p.n1, FRACTAL, k0], cube, "L1", "b_l1")
        self.a_l0 = b.buffer([p.m1, p.k1, FRACTAL, k0], cube, "L0A", "a_l0a")
        self.b_l0 = b.buffer([p.k1, p.n1, FRACTAL, k0], cube, "L0B", "b_l0b")
        acc_el = accumulator_type(cube)
        self.c_l0 = b.buffer([p.n1, p.m1, FRACTAL, FRACTAL], acc_el, "L0C", "c_l0c")
        self.a_tiles = StepOperands(b, [p.m1, p.k1, FRACTAL, k0], cube, p.y)
        self.first: SSAValue | None = None
        """This block's first hidden column (None: one block, column 0)."""
        self.block: SSAValue | None = None
        """This block's index (None: one block)."""
        if p.cores > 1:  # the block index selects the columns
            block = b.hoist(BlockIdxOp()).results[0]
            block.name_hint = "block"
            self.block = block
            first = b.hoist(arith.MuliOp(block, b.index(p.per * hb))).results[0]
            first.name_hint = "first_col"
            self.first = first
        self.weights = GateWeights(
            b, p.hidden, p.op.GATES, p.dirs, cube, p.resident, self.b_l1, self.b_l0,
            p.per * p.n1, self.first, k0,
        )  # fmt: skip
        self.cols: list[SSAValue] = []
        """Each of this block's hidden blocks' first column."""
        self.local: dict[SSAValue, int] = {}
        """A column's hidden fractal among this block's (its resident weights')."""
        for k in range(p.per):
            col = b.index(k * hb)
            if self.first is not None:
                col = b.hoist(arith.AddiOp(self.first, col)).results[0] if k else self.first
                col.name_hint = "col"
            self.cols.append(col)
            self.local[col] = k * p.n1
        tile = [1, mp, hb]
        # the int32 sum itself when quantised (corrected before its float conversion)
        self.acc = b.buffer(tile, acc_el if p.quantised else el, "UB", "acc_ub")
        self.accs = [self.acc]
        """The UB accumulators the gates' fixpipes alternate between (``p.accs``: on a
        decoupled preset the AIV's copy of one gate's sum out of the workspace need not
        wait until the vector unit is done with the previous gate's)."""
        if p.accs == 2:
            self.accs.append(b.buffer(tile, el, "UB", "acc2_ub"))
        names = {1: ["h"], 3: ["z", "r", "n", "hp"], 4: ["t1", "t2", "c"]}[p.op.GATES]
        self.t = {n: b.buffer(tile, el, "UB", f"{n}_ub") for n in names}
        self.g_t = b.buffer(tile, el, "UB", "g_ub") if p.projected else None
        """A gate's columns of the step's input projection (``projected``)."""
        self.y4 = b.buffer([1, 1, mp, hb], el, "UB", "y_ub")
        row = b.buffer([1, hb], el, "UB", "row_ub")
        self.rows = HeldRows(b, hb, el, {"b": row, "p": row}, self._load_row)
        """The bias (``b``) and peephole (``p``) rows, keyed by (kind, the offset of the
        gate's first column, the block's column): held in UB across the steps when
        ``rows_held``."""
        held = [("b", p.bias, 2 * p.op.GATES), ("p", p.peephole, 3)] if p.rows_held else []
        for kind, arg, count in held:
            for k, col in enumerate(self.cols if arg is not None else []):
                for r in range(count):
                    self.rows.hold((kind, r * p.hidden, col), f"{kind}{r}_{k}_ub")
        self._nest = ExitStack()

    def open_nest(self) -> None:
        """A loop of one trip around the vector work that follows a gate's fixpipe: a
        top-level loop nest of its own, so inject-sync fences each gate's vector work
        apart (a step's straight-line loads would need more than its 8 events)."""
        b = self.b
        self._nest.enter_context(b.loop_over(b.index(0), b.index(1), b.index(1), "v"))

    def close_nest(self) -> None:
        self._nest.close()

    # ---- cube ----------------------------------------------------------------------
    def gate(self, g: int, d: int, col: SSAValue, parts: list) -> None:
        """``parts``: (A's GM arg, its leading offsets, weight arg, K) — or (an L1 buffer
        holding A's whole K as NZ fractals, None, weight arg, K); accumulated in L0C (the
        first part starts it), then fixpipe into the UB accumulator. A :class:`Projected`
        part is added by the vector side instead (the accumulator is that alone when it is
        the only part)."""
        self.close_nest()
        projected = [part for part in parts if isinstance(part, Projected)]
        parts = [part for part in parts if not isinstance(part, Projected)]
        if not parts:
            self.acc = self.accs[(self.accs.index(self.acc) + 1) % len(self.accs)]
            self.open_nest()
        else:
            self._matmul(g, d, col, parts)
        for part in projected:
            self.add_projection(g, d, col, part.t, alone=not parts)

    def add_projection(self, g: int, d: int, col: SSAValue, t: SSAValue, alone: bool) -> None:
        """Gate ``g``'s columns of step ``t``'s input projection into the accumulator
        (``alone``: it is the sum), else added to it."""
        b, p = self.b, self.p
        zero = b.index(0)
        at = b.add_index(col, b.index((d * p.op.GATES + g) * p.hidden))
        dst = self.acc if alone else self.g_t
        assert dst is not None
        b.add(CopyOp(p.x, [t, zero, at], dst, [zero] * 3))
        if not alone:
            b.add(BINARY_OPS["vadd"](self.acc, dst, self.acc))

    def _matmul(self, g: int, d: int, col: SSAValue, parts: list[tuple]) -> None:
        """The gate's matmul parts accumulated in L0C, then fixpipe into the next UB
        accumulator."""
        b, p = self.b, self.p
        zero = b.index(0)
        row = b.add_index(col, b.index(g * p.hidden)) if g else col
        col_fractal = self.local[col]

        def step(arg, lead, weight, ki: SSAValue, first: SSAValue) -> None:
            a_l0 = self.a_l0
            if lead is None:  # A already in L1, all of its K: its fractals at ki
                b.add(Load2dOp(arg, ki, zero, a_l0, "swap"))
            elif (kept := self.a_tiles.kept(arg, lead)) is not None:
                a_l0 = kept  # loaded by an earlier gate of this step
            else:
                a_l0 = self.a_tiles.slot(arg, lead) if one_trip else None
                self.load_a(arg, lead, ki, a_l0 or self.a_l0)
                a_l0 = a_l0 or self.a_l0
            self.weights.to_l0b(weight, d, g, row, ki, col_fractal)
            b.add(MmadOp(a_l0, self.b_l0, self.c_l0, first))

        for n, (arg, lead, weight, k) in enumerate(parts):
            one_trip = k_fractals(k, p.k0) <= p.k1
            bound = _bind(step, arg, lead, weight)
            # always a loop, even of one trip: inject-sync then gives the loads of all
            # gates' K loops slotted events instead of one event per straight-line load
            with b.loop_over(zero, b.index(k_fractals(k, p.k0)), b.index(p.k1), "k") as ki:
                if n == 0:
                    first = b.add(arith.CmpiOp(ki, zero, "eq")).results[0]
                    first.name_hint = "first"
                else:
                    first = b.flag(False)
                bound(ki, first)
        self.acc = self.accs[(self.accs.index(self.acc) + 1) % len(self.accs)]
        b.add(FixpipeOp(self.c_l0, self.acc, [zero] * 3))
        self.open_nest()

    def load_a(self, arg: SSAValue, lead: list[SSAValue], ki: SSAValue, dst: SSAValue) -> None:
        """A's fractals at K fractal ``ki`` of ``arg[*lead]`` GM -> L1 -> ``dst`` (L0A)."""
        b = self.b
        zero = b.index(0)
        b.add(Nd2NzOp(arg, [*lead, zero, b.affine(ki, self.p.k0)], self.a_l1))
        b.add(Load2dOp(self.a_l1, zero, zero, dst, "swap"))

    def prefetch(self, arg: SSAValue, lead: list[SSAValue], k: int) -> None:
        """Load a step's A operand that does not depend on the state (``x_t``) into its
        L0A slot before the step waits for the state: MTE2 fetches it while the AIV still
        computes the previous step."""
        if k_fractals(k, self.p.k0) > self.p.k1:
            return
        slot = self.a_tiles.slot(arg, lead)
        if slot is not None:
            self.load_a(arg, lead, self.b.index(0), slot)

    # ---- vector --------------------------------------------------------------------
    def load_rows(self, d: int) -> None:
        """Direction ``d``'s held rows GM -> UB, before its step 0 (a nest of their own)."""
        if not self.rows.held:
            return
        self.open_nest()
        self.rows.load_held(d)
        self.close_nest()

    def _load_row(self, key: RowKey, d: int, row: SSAValue) -> None:
        """Row ``B[d, base + col :]`` (kind ``b``) or ``P[d, base + col :]`` (``p``)."""
        b, p = self.b, self.p
        kind, base, col = key
        arg = p.bias if kind == "b" else p.peephole
        assert arg is not None
        zero = b.index(0)
        b.add(CopyOp(arg, [b.index(d), b.add_index(col, b.index(base)) if base else col],
                     row, [zero, zero]))  # fmt: skip

    def bias_row(self, d: int, base: int, col: SSAValue) -> SSAValue:
        """Row ``B[d, base + col :]`` (held, or loaded now into the scratch row)."""
        return self.rows.row(("b", base, col), d)

    def pre(self, dst: SSAValue, d: int, col: SSAValue, biases: list[int]) -> None:
        """``dst = acc + B[d, bases...]`` (the gate's bias rows broadcast over the batch)."""
        b, p = self.b, self.p
        src = self.acc
        if p.bias is None or not biases:
            b.add(UNARY_OPS["vcopy"](src, dst))
            return
        for base in biases:
            b.add(BINARY_OPS["vadd"](src, self.bias_row(d, base, col), dst))
            src = dst

    def peephole(self, dst: SSAValue, d: int, k: int, col: SSAValue, c: SSAValue) -> None:
        """``dst += P[d, k·H + col] ⊙ c`` (the accumulator is free by then: scratch)."""
        b, p = self.b, self.p
        if p.peephole is None:
            return
        row = self.rows.row(("p", k * p.hidden, col), d)
        b.add(BINARY_OPS["vmul"](c, row, self.acc))
        b.add(BINARY_OPS["vadd"](dst, self.acc, dst))

    def activate(self, t: SSAValue, act: Activation, clip: bool = True) -> None:
        b, p = self.b, self.p
        if clip and p.clip is not None:
            b.add(SCALAR_OPS["vmins"](t, float(p.clip), t))
            b.add(SCALAR_OPS["vmaxs"](t, -float(p.clip), t))
        name, alpha, beta = act
        if name in ("sigmoid", "tanh", "relu"):
            b.add(UNARY_OPS[f"v{name}"](t, t))
        elif name == "affine":
            b.add(SCALAR_OPS["vmuls"](t, 1.0 if alpha is None else alpha, t))
            b.add(SCALAR_OPS["vadds"](t, beta or 0.0, t))
        else:  # hardsigmoid
            b.add(SCALAR_OPS["vmuls"](t, 0.2 if alpha is None else alpha, t))
            b.add(SCALAR_OPS["vadds"](t, 0.5 if beta is None else beta, t))
            b.add(SCALAR_OPS["vmins"](t, 1.0, t))
            b.add(SCALAR_OPS["vmaxs"](t, 0.0, t))

    def load_state(self, arg: SSAValue | None, d: int, col: SSAValue, dst: SSAValue) -> None:
        b = self.b
        zero = b.index(0)
        if arg is None:
            b.add(DupOp(dst, 0.0))
        else:
            b.add(CopyOp(arg, [b.index(d), zero, col], dst, [zero] * 3))

    def store_state(self, src: SSAValue, arg: SSAValue, d: int, col: SSAValue) -> None:
        zero = self.b.index(0)
        self.b.add(CopyOp(src, [zero] * 3, arg, [self.b.index(d), zero, col]))

    def store_y(
        self, src: SSAValue, t: SSAValue, d: int, col: SSAValue, dst: SSAValue | None = None
    ) -> None:
        """``src`` to step ``t`` of the sequence output ``dst`` (default ``Y``)."""
        b = self.b
        zero = b.index(0)
        b.add(UNARY_OPS["vcopy"](src, self.y4))
        b.add(CopyOp(self.y4, [zero] * 4, dst or self.p.y, [t, b.index(d), zero, col]))

    # ---- flags (decoupled presets) and the all-core barrier ------------------------------
    def barrier(self) -> None:
        """Shared over cores: every block waits until all have stored their columns (a
        hard barrier of the AIVs on a decoupled preset — each AIV then hands over to its
        AIC by :data:`STATE_FLAG`; a soft barrier of the AI cores on a coupled one)."""
        self.close_nest()
        self.a_tiles.state_changed()
        if self.p.cores > 1:
            mode, cores = ("soft", "all") if self.coupled else ("hard", "aiv")
            self.b.add(SyncAllOp(mode, cores))

    def state_stored(self) -> None:
        self.barrier()
        self.hand_over()

    def hand_over(self) -> None:
        """On a decoupled preset, the AIV's set of :data:`STATE_FLAG` after its stores:
        the AIC may read what they wrote."""
        self.close_nest()
        if not self.coupled:
            self.b.add(SyncBlockSetOp(STATE_FLAG, "aiv_to_aic", "MTE3"))

    def wait_state(self) -> None:
        self.close_nest()
        self.a_tiles.state_changed()
        if not self.coupled:
            self.b.add(SyncBlockWaitOp(STATE_FLAG, "aiv_to_aic", "MTE2"))


@dataclass(frozen=True)
class Projected:
    """A gate part read from the input projection at step ``t`` (no matmul)."""

    t: SSAValue


def _bind(fn: Callable, *args) -> Callable[[SSAValue, SSAValue], None]:
    return lambda ki, first: fn(*args, ki, first)


def _step_sources(e: _Emitter, d: int, t: SSAValue, prev: SSAValue | None):
    """(A parts of x_t·Wᵀ, of h_{t-1}·Rᵀ) for the gate matmuls; no h part when the
    previous state is a zero initial state."""
    p, b = e.p, e.b
    x_part = Projected(t) if p.projected else (p.x, [t], p.w, p.inputs)
    if prev is None:
        h_part = None if p.h0 is None else (p.h0, [b.index(d)], p.r, p.hidden)
    else:
        h_part = (p.y, [prev, b.index(d)], p.r, p.hidden)
    return x_part, h_part


def _rnn_block(e: _Emitter, d: int, t, prev, col, first_step: bool) -> None:
    x_part, h_part = _step_sources(e, d, t, prev)
    (h,) = e.t.values()
    e.gate(0, d, col, [x_part, *([h_part] if h_part else [])])
    e.pre(h, d, col, [0, e.p.hidden])
    e.activate(h, e.p.acts[d][0])
    e.store_y(h, t, d, col)
    e.store_state(h, e.p.y_h, d, col)


def _lstm_block(e: _Emitter, d: int, t, prev, col, first_step: bool) -> None:
    p, b = e.p, e.b
    x_part, h_part = _step_sources(e, d, t, prev)
    parts = [x_part, *([h_part] if h_part else [])]
    t1, t2, c = e.t["t1"], e.t["t2"], e.t["c"]
    f, g, hact = p.acts[d]
    n4 = 4 * p.hidden
    assert p.y_c is not None
    e.load_state(p.c0 if first_step else p.y_c, d, col, c)
    # i (gate 0)
    e.gate(0, d, col, parts)
    e.pre(t1, d, col, [0, n4])
    e.peephole(t1, d, 0, col, c)
    e.activate(t1, f)
    # f (gate 2): f = 1 - i with input_forget
    if p.op.attr("input_forget"):
        b.add(SCALAR_OPS["vmuls"](t1, -1.0, t2))
        b.add(SCALAR_OPS["vadds"](t2, 1.0, t2))
    else:
        e.gate(2, d, col, parts)
        e.pre(t2, d, col, [2 * p.hidden, n4 + 2 * p.hidden])
        e.peephole(t2, d, 2, col, c)
        e.activate(t2, f)
    b.add(BINARY_OPS["vmul"](t2, c, c))
    # c candidate (gate 3): c = f ⊙ c + i ⊙ g(·)
    e.gate(3, d, col, parts)
    e.pre(t2, d, col, [3 * p.hidden, n4 + 3 * p.hidden])
    e.activate(t2, g)
    b.add(BINARY_OPS["vmul"](t1, t2, t1))
    b.add(BINARY_OPS["vadd"](c, t1, c))
    # o (gate 1), peephole on the new c; h = o ⊙ h(c)
    e.gate(1, d, col, parts)
    e.pre(t1, d, col, [p.hidden, n4 + p.hidden])
    e.peephole(t1, d, 1, col, c)
    e.activate(t1, f)
    b.add(UNARY_OPS["vcopy"](c, t2))
    e.activate(t2, hact, clip=False)
    b.add(BINARY_OPS["vmul"](t1, t2, t1))
    e.store_y(t1, t, d, col)
    e.store_state(t1, p.y_h, d, col)
    e.store_state(c, p.y_c, d, col)
    if p.y_cs is not None:  # graph.lstm_cells: c after every step
        e.store_y(c, t, d, col, p.y_cs)


def _gru_reset(e: _Emitter, d: int, t, prev, col, first_step: bool) -> None:
    """First pass of a GRU step without linear_before_reset: ``r ⊙ h_{t-1}`` into Y[t]."""
    p, b = e.p, e.b
    x_part, h_part = _step_sources(e, d, t, prev)
    r, hp = e.t["r"], e.t["hp"]
    e.gate(1, d, col, [x_part, *([h_part] if h_part else [])])
    e.pre(r, d, col, [p.hidden, 4 * p.hidden])
    e.activate(r, p.acts[d][0])
    e.load_state(p.h0 if first_step else p.y_h, d, col, hp)
    b.add(BINARY_OPS["vmul"](r, hp, r))
    e.store_y(r, t, d, col)


def _gru_block(e: _Emitter, d: int, t, prev, col, first_step: bool) -> None:
    p, b = e.p, e.b
    x_part, h_part = _step_sources(e, d, t, prev)
    z, r, n, hp = e.t["z"], e.t["r"], e.t["n"], e.t["hp"]
    f, g = p.acts[d]
    hs = p.hidden
    lbr = bool(p.op.attr("linear_before_reset"))
    e.gate(0, d, col, [x_part, *([h_part] if h_part else [])])
    e.pre(z, d, col, [0, 3 * hs])
    e.activate(z, f)
    e.load_state(p.h0 if first_step else p.y_h, d, col, hp)
    if lbr:
        e.gate(1, d, col, [x_part, *([h_part] if h_part else [])])
        e.pre(r, d, col, [hs, 4 * hs])
        e.activate(r, f)
        e.gate(2, d, col, [x_part])
        e.pre(n, d, col, [2 * hs])
        if h_part is not None:
            e.gate(2, d, col, [h_part])
            _add_recurrent(e, d, col, r, n, 5 * hs)
        elif p.bias is not None:  # h_{t-1} = 0: r ⊙ Rb_n only
            b.add(BINARY_OPS["vmul"](r, e.bias_row(d, 5 * hs, col), r))
            b.add(BINARY_OPS["vadd"](n, r, n))
    else:
        rh_part = (p.y, [t, b.index(d)], p.r, hs)
        e.gate(2, d, col, [x_part, rh_part])
        e.pre(n, d, col, [2 * hs, 5 * hs])
    e.activate(n, g)
    # h = n + z ⊙ (h_{t-1} - n)
    b.add(BINARY_OPS["vsub"](hp, n, hp))
    b.add(BINARY_OPS["vmul"](z, hp, hp))
    b.add(BINARY_OPS["vadd"](n, hp, n))
    e.store_state(n, p.y_h, d, col)
    if lbr:
        e.store_y(n, t, d, col)


def _add_recurrent(e: _Emitter, d: int, col, r, n, base: int) -> None:
    """``n += r ⊙ (acc + Rb_n)`` (linear_before_reset)."""
    b, p = e.b, e.p
    if p.bias is not None:
        b.add(BINARY_OPS["vadd"](e.acc, e.bias_row(d, base, col), e.acc))
    b.add(BINARY_OPS["vmul"](r, e.acc, e.acc))
    b.add(BINARY_OPS["vadd"](n, e.acc, n))


def _copy_back(e: _Emitter, d: int, t, prev, col, first_step: bool) -> None:
    """Y[t, d] = Y_h[d] (the GRU step's h, written to Y_h while Y[t] held r ⊙ h)."""
    zero = e.b.index(0)
    e.b.add(CopyOp(e.p.y_h, [e.b.index(d), zero, col], e.t["hp"], [zero] * 3))
    e.store_y(e.t["hp"], t, d, col)


Block = Callable[[_Emitter, int, SSAValue, SSAValue | None, SSAValue, bool], None]


def _passes(p: RecurrentPlan) -> list[tuple[Block, bool]]:
    """The passes over the hidden blocks of one step; True: the cube reads what the pass
    before it stored (a state hand-over on decoupled presets)."""
    if isinstance(p.op, LSTMBase):
        return [(_lstm_block, False)]
    if isinstance(p.op, GRUOp):
        if p.op.attr("linear_before_reset"):
            return [(_gru_block, False)]
        return [(_gru_reset, False), (_gru_block, True), (_copy_back, False)]
    return [(_rnn_block, False)]


def emit_recurrent_kernel(body: KernelBody, b: KernelBuilder) -> str | None:
    """Tile a lone RNN / GRU / LSTM kernel (see the module docstring); why not, else None."""
    (op,) = body.ops
    assert isinstance(op, RecurrentOp)
    p = plan_recurrent(body, op, b)
    if isinstance(p, str):
        return p
    if b.dry_run:
        return None
    e = _Emitter(p, b)
    passes = _passes(p)
    if not b.hw.coupled:
        # a step's gates alternate the workspace slots: the cube fills one while the AIV
        # drains the other
        body.fn.attributes[ALTERNATE_ATTR] = UnitAttr()
    direction = op.attr("direction") or "forward"

    def step(d: int, t: SSAValue, prev: SSAValue | None) -> None:
        if not p.projected:
            e.prefetch(p.x, [t], p.inputs)
        if prev is not None:
            e.wait_state()
        for block, hands_over in passes:
            if hands_over:
                e.state_stored()
                e.wait_state()
            elif block is _copy_back:  # Y[t] still read by the other cores' gate n
                e.barrier()
            for col in e.cols:
                block(e, d, t, prev, col, prev is None)
                e.close_nest()
        e.state_stored()

    def last_set(d: int) -> None:
        e.wait_state()  # the last step's set: every set is waited for

    run_steps(e, str(direction), step, end=last_set)
    return None
