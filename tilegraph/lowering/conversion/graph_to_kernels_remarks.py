"""What ``lower-graph-to-kernels`` tells a researcher: remarks and the lowering's summary.

The pass leaves a :class:`~tilegraph.passes.statistics.Remark` (MLIR's optimisation
remarks) for

* every fused group it could not lower whole (kind ``split-group``): the group's ops with
  the ONNX nodes each implements, the strategy that refused the whole group and its reason,
  and what the pass did instead — ``split`` (runs of ops that a strategy still tiles),
  ``peeled-epilogue`` (a matmul group cut at its row reshape) or ``unclaimed-attention``
  (the three kernels an attention group was claimed from) — with the kernels it made and
  the unit of each;
* every kernel it leaves on the host (kind ``host-kernel``): its ops and the reason.

:func:`lowering_section` gathers these and the pass's counters into the ``lowering``
section of ``tilegraph-run --json``; :func:`lowering_lines` prints it
(``tilegraph-run``'s report, ``tilegraph-opt --lowering-remarks``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import LocationAttr, StringAttr
from xdsl.ir import Operation

from tilegraph.dialects.graph.provenance import nodes_text, onnx_nodes
from tilegraph.lowering.analysis.kernel_attrs import HOST_REASON_ATTR, KERNEL_ATTR
from tilegraph.passes.statistics import PassStatistics, Remark, StatisticsCollector

PASS_NAME = "lower-graph-to-kernels"
SPLIT_KIND = "split-group"
HOST_KIND = "host-kernel"
WHERE_NODES = 3
"""A remark's place names this many ONNX nodes at most (its details hold them all)."""


def _where(location: LocationAttr) -> str:
    nodes = onnx_nodes(location)
    if len(nodes) <= WHERE_NODES:
        return nodes_text(nodes) if nodes else ""
    return f"{nodes_text(nodes[:WHERE_NODES])} (+{len(nodes) - WHERE_NODES} more)"


def _op_entries(ops: Sequence[Operation]) -> list[dict[str, Any]]:
    """Each op by name with the ONNX nodes it implements (its location)."""
    return [{"op": op.name, "nodes": onnx_nodes(op.location)} for op in ops]


def _attr(fn: func.FuncOp, name: str) -> str | None:
    attr = fn.attributes.get(name)
    return attr.data if isinstance(attr, StringAttr) else None


def _part_entry(fn: func.FuncOp) -> dict[str, Any]:
    entry: dict[str, Any] = {"kernel": fn.sym_name.data, "unit": _attr(fn, KERNEL_ATTR)}
    reason = _attr(fn, HOST_REASON_ATTR)
    if reason is not None:
        entry["reason"] = reason
    return entry


def remark_split_group(
    stats: PassStatistics,
    group: str,
    ops: Sequence[Operation],
    location: LocationAttr,
    refusal: tuple[str, str],
    action: str,
    parts: Sequence[func.FuncOp],
) -> None:
    """Leave the remark of a group (kernel name ``group``, members ``ops``) that the
    strategy ``refusal[0]`` refused for the reason ``refusal[1]`` and that ``action``
    turned into the kernels ``parts``."""
    strategy, reason = refusal
    entries = [_part_entry(p) for p in parts]
    units: dict[str, int] = {}
    for entry in entries:
        units[entry["unit"]] = units.get(entry["unit"], 0) + 1
    by_unit = ", ".join(f"{unit} {n}" for unit, n in units.items())
    labels = ", ".join(dict.fromkeys(op.name.split(".", 1)[-1] for op in ops))
    stats.remark(
        SPLIT_KIND,
        _where(location),
        f"group {group} ({len(ops)} ops: {labels}) refused by the {strategy} strategy: "
        f"{reason}; {action} into {len(parts)} kernels ({by_unit})",
        group=group,
        ops=_op_entries(ops),
        strategy=strategy,
        reason=reason,
        action=action,
        kernels=entries,
    )


def remark_host_kernel(stats: PassStatistics, fn: func.FuncOp, ops: Sequence[Operation]) -> None:
    """Leave the remark of kernel ``fn`` (computing ``ops``), which stays on the host."""
    reason = _attr(fn, HOST_REASON_ATTR) or "no strategy runs it"
    name = fn.sym_name.data
    labels = ", ".join(op.name.split(".", 1)[-1] for op in ops)
    stats.remark(
        HOST_KIND,
        _where(fn.location),
        f"kernel {name} ({labels}) runs on the host: {reason}",
        kernel=name,
        ops=_op_entries(ops),
        reason=reason,
    )


def lowering_section(collector: StatisticsCollector) -> dict[str, Any]:
    """The ``lowering`` section of a report from the statistics of a lowering run.

    ``kernels``: by unit as ``lower-graph-to-kernels`` marked them (``cube``, ``vector``,
    ``host``; a device loop's body kernels included) and ``mix``: of the cube kernels,
    those ``tile-kernels`` made AIC + AIV kernels on a decoupled preset (``tilegraph-run``
    adds ``dma``: of the vector kernels, those that run DMA only, by the cycle model);
    ``groups_whole``: fused groups lowered as one kernel; ``groups_split``: those that were
    not, each with its remark's details (``split_groups``); ``host_kernels``: every host
    kernel with its ops and reason; ``device_loops``; ``empty_no_launch``: kernels whose
    results are all empty, so run no launch (:mod:`.graph_to_kernels_empty`);
    ``statistics``: the counters of the lowering passes."""
    stats = collector.passes.get(PASS_NAME, PassStatistics(PASS_NAME))
    tiling = collector.passes.get("tile-kernels", PassStatistics("tile-kernels"))
    units = ("cube", "vector", "host")
    split = [r.details for r in stats.remarks if r.kind == SPLIT_KIND]
    return {
        "kernels": {
            **{unit: int(stats[f"{unit}-kernels"]) for unit in units},
            "mix": int(tiling["mix-kernels"]),
        },
        "groups_whole": int(stats["groups-whole"]),
        "groups_split": len(split),
        "split_groups": split,
        "host_kernels": [r.details for r in stats.remarks if r.kind == HOST_KIND],
        "device_loops": int(stats["device-loops"]),
        "empty_no_launch": int(stats["empty-kernels"]),
        "statistics": collector.as_dict(),
    }


def _split_line(group: dict[str, Any]) -> str:
    nodes = [n for op in group["ops"] for n in op["nodes"]]
    where = f" at {nodes_text(nodes[:WHERE_NODES])}" if nodes else ""
    more = f" (+{len(nodes) - WHERE_NODES} more)" if len(nodes) > WHERE_NODES else ""
    ops = ", ".join(dict.fromkeys(op["op"].split(".", 1)[-1] for op in group["ops"]))
    return (
        f"{group['group']} ({ops}){where}{more}: {group['strategy']} refused "
        f"({group['reason']}); {group['action']} into {len(group['kernels'])} kernels"
    )


def lowering_lines(section: dict[str, Any], limit: int | None = 3) -> list[str]:
    """The section as text: a summary line, then one line per split group (the first
    ``limit`` of them and a count of the rest; all when ``limit`` is None)."""
    kernels = dict(section["kernels"])
    mix, dma = kernels.pop("mix"), kernels.pop("dma", 0)
    inner = {"cube": f" ({mix} mix)" if mix else "", "vector": f" ({dma} DMA only)" if dma else ""}
    units = ", ".join(f"{unit} {n}{inner.get(unit, '')}" for unit, n in kernels.items())
    lines = [
        f"lowering: kernels {units}; fused groups {section['groups_whole']} whole, "
        f"{section['groups_split']} split; {len(section['host_kernels'])} host kernels"
        + (
            f"; {empty} with empty results, no launch"
            if (empty := section.get("empty_no_launch"))
            else ""
        )
    ]
    groups = section["split_groups"]
    shown = groups if limit is None else groups[:limit]
    lines += [f"  split: {_split_line(g)}" for g in shown]
    if limit != 0 and len(groups) > len(shown):
        lines.append(f"  ... {len(groups) - len(shown)} more split groups (--verbose lists all)")
    return lines


def lowering_remarks(collector: StatisticsCollector) -> list[Remark]:
    """The remarks of ``lower-graph-to-kernels`` (what ``--lowering-remarks`` prints)."""
    return collector.remarks(PASS_NAME)
