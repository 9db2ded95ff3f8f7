"""Exact audit of a channel: the smallest parameter each notion holds with (docs/spec.md §2 "Exact audit").

Every value is computed from the notion's definition (probability ratios, sums, entropies) on
the channel itself, never read back from a solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .problem import SUM_TOL, as_stochastic
from .notions import AUDIT_TOL, NOTIONS, leakage_keys
from . import measures as info

CHANNEL_TOL = SUM_TOL
"""A channel is row-stochastic if every entry is >= 0 and every row sums to 1 within this."""


def check_channel(problem, channel, key: str = "channel") -> np.ndarray:
    """The channel as a float array of shape (d, m), row-stochastic within CHANNEL_TOL, or ProblemError."""
    q = as_stochastic(key, channel, (problem.d, None))
    return q


def measures(problem, q: np.ndarray) -> dict:
    """Every budget-free leakage measure that applies to the problem's prior / latent secret: the
    leakage of every registered notion that needs no parameter but its budget (`Notion.measure`),
    then the information measures of the secret."""
    out = {}
    for name, cls in NOTIONS.items():
        value = cls.measure(problem, q)
        if value is not None:
            out[name] = value
    return {**out, **{f"secret_{k}": v for k, v in info.all_measures(problem.secret, q).items()}}


@dataclass(frozen=True)
class Audit:
    """Leakage of one channel under the problem's notions, and whether each holds."""

    leakage: dict
    satisfied: dict
    measures: dict

    @property
    def ok(self) -> bool:
        return all(self.satisfied.values())


def audit(problem, channel, tol: float = AUDIT_TOL, with_measures: bool = True) -> Audit:
    """Exact leakage of `channel` under each of `problem.privacy` plus (unless `with_measures` is
    False, as in sweeps) the general measures."""
    q = check_channel(problem, channel)
    leakage, satisfied = {}, {}
    for key, notion in zip(leakage_keys(problem.privacy), problem.privacy):
        leak = notion.leakage(problem, q)
        leakage[key] = leak
        satisfied[key] = notion.satisfied(leak, tol)
    return Audit(leakage, satisfied, measures(problem, q) if with_measures else {})
