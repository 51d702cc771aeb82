"""The tuning database: what a tuner found for each kernel, kept for later compiles.

A SQLite file (stdlib :mod:`sqlite3`) keyed by :func:`kernel_key`, a content hash of what a
macro kernel computes — its body printed with SSA and symbol names normalised (so the same
convolution in two models, or twice in one, is one key), which carries its ops, shapes and
element types — together with the preset (its name and every field value, so an overridden
preset is another key), the precision and :data:`~tilegraph.cost_model.COST_MODEL_VERSION`
(results the cycle model would now score differently are not reused).

Schema (``SCHEMA_VERSION``)::

    kernels(key PRIMARY KEY, description, default_point, best_point, best_us)
    candidates(key, point, us, infeasible, PRIMARY KEY (key, point))
    graphs(key, options, us, PRIMARY KEY (key, options))

``point`` / ``default_point`` / ``best_point`` / ``options`` are JSON objects with sorted
keys; ``us`` is the cycle model's score (µs), NULL with the ``infeasible`` reason for a point
the lowering rejects. ``graphs`` holds the whole-model (graph-level) choices a tuner scored
for a model (its key: :func:`graph_key`). Every :meth:`TuningDatabase.record` commits at
once, so a tuning run killed half-way keeps each result it reported; the best point is
updated in the same transaction (the lowest score; ties go to the default point, then to
the lowest point text, so the best does not depend on the order results arrived in).

The default location is ``$XDG_CACHE_HOME/tilegraph/tuning.sqlite`` (``~/.cache/...``
without it): :func:`default_db_path`. ``apply-tuning{db=FILE}``
(:mod:`tilegraph.lowering.transforms.apply_tuning`) writes the best points on a module's
kernels before ``tile-kernels``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr

from tilegraph.cost_model import COST_MODEL_VERSION
from tilegraph.hardware import HardwareModel
from tilegraph.lowering.analysis.tuning_params import PARAMS_ATTR, ParamValue

SCHEMA_VERSION = 1
"""The layout of the tables; a file of another version is refused with a message."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kernels (
    key TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    default_point TEXT NOT NULL,
    best_point TEXT,
    best_us REAL
);
CREATE TABLE IF NOT EXISTS candidates (
    key TEXT NOT NULL,
    point TEXT NOT NULL,
    us REAL,
    infeasible TEXT,
    PRIMARY KEY (key, point)
);
CREATE TABLE IF NOT EXISTS graphs (
    key TEXT NOT NULL,
    options TEXT NOT NULL,
    us REAL NOT NULL,
    PRIMARY KEY (key, options)
);
"""

Point = dict[str, ParamValue]


class TuningDatabaseError(ValueError):
    """A database file that is missing (where one must exist), unreadable or of another
    schema version."""


def default_db_path() -> Path:
    """``$XDG_CACHE_HOME/tilegraph/tuning.sqlite``, else ``~/.cache/tilegraph/...``."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "tilegraph" / "tuning.sqlite"


def point_text(point: Mapping[str, ParamValue]) -> str:
    """A point as the database stores it (JSON, keys sorted: equal points, equal text)."""
    return json.dumps(dict(point), sort_keys=True)


def _preset_text(hw: HardwareModel) -> str:
    fields = {f.name: getattr(hw, f.name) for f in dataclasses.fields(hw)}
    return json.dumps(fields, sort_keys=True, default=_field_text)


def _field_text(value: object) -> object:
    """A preset field JSON has no form for (a mapping proxy, a nested preset): its items
    or its text."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    return repr(value)


def normalised_kernel_text(fn: func.FuncOp) -> str:
    """``fn`` printed with its SSA names numbered, its symbol named ``kernel`` and its
    ``tile.params`` left out: what it computes, whatever the model called things."""
    copy = fn.clone()
    copy.sym_name = StringAttr("kernel")
    copy.attributes.pop(PARAMS_ATTR, None)
    for op in copy.walk():
        for result in op.results:
            result.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return str(copy)


def content_key(text: str, hw: HardwareModel, precision: str) -> str:
    """The key of a normalised kernel text (:func:`normalised_kernel_text`) on ``hw`` at
    ``precision`` under this cost model version."""
    digest = hashlib.sha256()
    for part in (text, _preset_text(hw), precision, str(COST_MODEL_VERSION)):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def kernel_key(fn: func.FuncOp, hw: HardwareModel, precision: str) -> str:
    """The database key of macro kernel ``fn`` (see the module docstring)."""
    return content_key(normalised_kernel_text(fn), hw, precision)


def graph_key(model_text: str, hw: HardwareModel, precision: str) -> str:
    """The key of a whole model's graph-level choices: its imported module's text."""
    return content_key("graph\0" + model_text, hw, precision)


@dataclass(frozen=True)
class Candidate:
    """One evaluated point of a kernel: its score, or why the lowering rejected it."""

    point: Point
    us: float | None
    infeasible: str | None = None


def _rank(point: str, us: float, default: str) -> tuple[float, bool, str]:
    return (us, point != default, point)


class TuningDatabase:
    """An open tuning database (see the module docstring); a context manager."""

    def __init__(self, path: str | Path, *, create: bool = True):
        """Open ``path``; ``create=False``: a missing file is a
        :class:`TuningDatabaseError` (applying a database that does not exist is a
        mistake, not an empty database)."""
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise TuningDatabaseError(f"tuning database {self.path}: no such file")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(str(self.path), timeout=30.0)
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if row is None:
                with self._db:
                    self._db.execute(
                        "INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                    )
            elif row[0] != str(SCHEMA_VERSION):
                raise TuningDatabaseError(
                    f"tuning database {self.path}: schema version {row[0]}, this tilegraph "
                    f"reads version {SCHEMA_VERSION}"
                )
        except sqlite3.DatabaseError as e:
            raise TuningDatabaseError(f"tuning database {self.path}: {e}") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> TuningDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_kernel(self, key: str, description: str, default: Mapping[str, ParamValue]) -> None:
        """Register a kernel (no-op when known): what it is, and its default point."""
        with self._db:
            self._db.execute(
                "INSERT OR IGNORE INTO kernels (key, description, default_point) VALUES (?, ?, ?)",
                (key, description, point_text(default)),
            )

    def record(self, key: str, candidate: Candidate) -> None:
        """Store one evaluated point of a registered kernel and commit (the best point is
        updated in the same transaction)."""
        text = point_text(candidate.point)
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO candidates VALUES (?, ?, ?, ?)",
                (key, text, candidate.us, candidate.infeasible),
            )
            if candidate.us is None:
                return
            row = self._db.execute(
                "SELECT default_point, best_point, best_us FROM kernels WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                raise TuningDatabaseError(f"kernel {key[:12]} is not registered (add_kernel)")
            default, best, best_us = row
            if best is None or _rank(text, candidate.us, default) < _rank(best, best_us, default):
                self._db.execute(
                    "UPDATE kernels SET best_point = ?, best_us = ? WHERE key = ?",
                    (text, candidate.us, key),
                )

    def candidates(self, key: str) -> dict[str, Candidate]:
        """Every evaluated point of a kernel, by :func:`point_text`."""
        rows = self._db.execute(
            "SELECT point, us, infeasible FROM candidates WHERE key = ?", (key,)
        ).fetchall()
        return {p: Candidate(json.loads(p), us, reason) for p, us, reason in rows}

    def best(self, key: str) -> tuple[Point, float] | None:
        """The best point of a kernel and its score, or None when it has no feasible one."""
        row = self._db.execute(
            "SELECT best_point, best_us FROM kernels WHERE key = ? AND best_point IS NOT NULL",
            (key,),
        ).fetchone()
        return None if row is None else (json.loads(row[0]), float(row[1]))

    def record_graph(self, key: str, options: Mapping[str, Any], us: float) -> None:
        """Store one scored graph-level choice of a model and commit."""
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO graphs VALUES (?, ?, ?)",
                (key, json.dumps(dict(options), sort_keys=True), us),
            )

    def graph_results(self, key: str) -> dict[str, float]:
        """The scored graph-level choices of a model, by their JSON text."""
        rows = self._db.execute("SELECT options, us FROM graphs WHERE key = ?", (key,))
        return {options: float(us) for options, us in rows.fetchall()}

    def best_graph(self, key: str) -> str | None:
        """The best graph-level pipeline recorded for a model (ties: plain ``O2``)."""
        known = self.graph_results(key)
        if not known:
            return None
        best = min(known, key=lambda text: (known[text], json.loads(text)["pipeline"] != "O2"))
        return str(json.loads(best)["pipeline"])

    def kernel_count(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM kernels").fetchone()
        return int(count)

    def candidate_count(self) -> int:
        (count,) = self._db.execute("SELECT COUNT(*) FROM candidates").fetchone()
        return int(count)

    def keys(self) -> Iterator[str]:
        for (key,) in self._db.execute("SELECT key FROM kernels ORDER BY key"):
            yield key
