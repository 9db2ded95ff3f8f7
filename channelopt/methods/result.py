"""The one result type, and the cleaning + re-audit every returned channel goes through."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

NEGATIVE_TOL = 1e-9
"""Entries in [-NEGATIVE_TOL, 0) are solver noise and set to 0; anything more negative is an error."""
ROW_TOL = 1e-8
"""Rows whose sums are off by at most this are renormalized; more is an error."""
NEGLIGIBLE_COLUMN = 1e-6
"""An output whose probability is below this from every input is merged into the most likely
output. Merging outputs is post-processing (000 Lemma 1): for the exact solution it cannot
increase any leakage, while an interior-point solver's ~1e-9 absolute noise on such a column
would otherwise show up as a large *relative* (log-ratio) error."""


def clean(q: np.ndarray) -> tuple[np.ndarray | None, str]:
    """Remove solver noise. Returns (channel, "") or (None, reason) when the noise is too large.

    Cleaning only removes noise below the stated tolerances; the cleaned channel is audited
    again, so a real violation can never be hidden by it.
    """
    q = np.array(q, dtype=float)
    if not np.all(np.isfinite(q)):
        return None, "the solver returned non-finite entries"
    if q.min() < -NEGATIVE_TOL:
        x, y = np.unravel_index(np.argmin(q), q.shape)
        return None, f"entry q[{x}][{y}] = {q[x, y]:.3g} is negative beyond {NEGATIVE_TOL:g}"
    q = np.maximum(q, 0.0)
    negligible = q.max(axis=0) < NEGLIGIBLE_COLUMN
    if negligible.any() and not negligible.all():
        target = int(np.argmax(np.where(negligible, -1.0, q.sum(axis=0))))
        q[:, target] += q[:, negligible].sum(axis=1)
        q[:, negligible] = 0.0
    sums = q.sum(axis=1)
    worst = int(np.argmax(np.abs(sums - 1)))
    if abs(sums[worst] - 1) > ROW_TOL:
        return None, f"row {worst} sums to {sums[worst]!r}, off by more than {ROW_TOL:g}"
    return q / sums[:, None], ""


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else ("Infinity" if v > 0 else "-Infinity") if not math.isnan(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


@dataclass
class Result:
    """What `solve` returns.

    status:      "optimal" (solved, cleaned, and the re-audit holds for every notion),
                 "infeasible" (no channel satisfies the notions together),
                 "inaccurate" (the best channel found fails the re-audit or the cleaning),
                 "solver-failed".
    channel:     q[x, y] = Pr(Y=y | X=x), or None.
    objective:   the utility of the returned channel, recomputed from the channel.
    leakage:     audited leakage per privacy table (keys as in CLI.md).
    certificate: how optimality is known (method, bound, gap), when it is.
    attempts:    every solver tried, in order, with its outcome.
    """

    status: str
    channel: np.ndarray | None = None
    objective: float | None = None
    leakage: dict = field(default_factory=dict)
    satisfied: dict = field(default_factory=dict)
    measures: dict = field(default_factory=dict)
    certificate: dict | None = None
    solver: str = ""
    method: str = ""
    time_s: float = 0.0
    timings: dict = field(default_factory=dict)
    attempts: list = field(default_factory=list)
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "optimal"

    def to_json(self) -> dict:
        out = {
            "status": self.status,
            "objective": self.objective,
            "channel": None if self.channel is None else self.channel.tolist(),
            "leakage": self.leakage,
            "satisfied": self.satisfied,
        }
        if self.certificate is not None:
            out["certificate"] = self.certificate
        out.update({"solver": self.solver, "method": self.method, "time_s": self.time_s,
                    "timings": self.timings, "attempts": self.attempts, "measures": self.measures})
        if self.message:
            out["message"] = self.message
        return _jsonable(out)
