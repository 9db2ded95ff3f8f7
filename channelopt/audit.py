"""Exact audit of a channel: the smallest parameter each notion holds with (docs/spec.md §2 "Exact audit").

Every value is computed from the notion's definition (probability ratios, sums, entropies) on
the channel itself, never read back from a solver.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .blas import one_thread
from .problem import SUM_TOL, as_stochastic
from .notions import AUDIT_TOL, NOTIONS, leakage_keys
from . import measures as info

CHANNEL_TOL = SUM_TOL
"""A channel is row-stochastic if every entry is >= 0 and every row sums to 1 within this."""


def check_channel(problem, channel, key: str = "channel") -> np.ndarray:
    """The channel as a float array of shape (d, m), row-stochastic within CHANNEL_TOL, or ProblemError.

    Parameters
    ----------
    problem : Problem
        Gives d.
    channel : array_like
        The channel.
    key : str, optional
        The name used in messages.

    Returns
    -------
    ndarray, shape (d, m)
        The channel as floats.

    Raises
    ------
    ProblemError
        If it is not row-stochastic within 1e-9 or has the wrong shape.
    """
    q = as_stochastic(key, channel, (problem.d, None))
    return q


def measures(problem, q: np.ndarray) -> dict:
    """Every budget-free leakage measure that applies to the problem's prior / latent secret: the
    leakage of every registered notion that needs no parameter but its budget (`Notion.measure`),
    then the information measures of the secret.

    Parameters
    ----------
    problem : Problem
        The prior and secret.
    q : ndarray, shape (d, m)
        The channel.

    Returns
    -------
    dict
        Notion name or secret_<measure> -> value in nats.
    """
    out = {}
    for name, cls in NOTIONS.items():
        value = cls.measure(problem, q)
        if value is not None:
            out[name] = value
    return {**out, **{f"secret_{k}": v for k, v in info.all_measures(problem.secret, q).items()}}


class Measures(Mapping):
    """`measures(problem, q)` as a read-only mapping computed on first use: a solve whose caller
    never reads the budget-free measures does not pay for them (at d = 256 they cost several
    times the closed form itself). The channel is copied, so later changes to it do not leak in.

    Parameters
    ----------
    problem : Problem
        The prior and secret.
    q : ndarray, shape (d, m)
        The channel.
    """

    def __init__(self, problem, q: np.ndarray):
        self._args: tuple | None = (problem, np.array(q, dtype=float))
        self._values: dict | None = None

    def _computed(self) -> dict:
        if self._values is None:
            assert self._args is not None
            with one_thread():
                self._values = measures(*self._args)
            self._args = None
        return self._values

    def __getitem__(self, key):
        return self._computed()[key]

    def __iter__(self):
        return iter(self._computed())

    def __len__(self) -> int:
        return len(self._computed())

    def __repr__(self) -> str:
        return repr(self._computed())


@dataclass(frozen=True)
class Audit:
    """Leakage of one channel under the problem's notions, and whether each holds (`audit`).

    Parameters
    ----------
    leakage : dict
        Per privacy table (keys as in docs/cli.md): the smallest parameter the channel satisfies
        the notion with.
    satisfied : dict
        Per privacy table: whether the leakage is within the budget (relative tolerance 1e-7).
    measures : dict
        Every budget-free measure of the channel (LDP, LIP, ALIP, DI, MIL, MIP and the secret's
        information measures), or {} when not requested.
    """

    leakage: dict
    satisfied: dict
    measures: Mapping

    @property
    def ok(self) -> bool:
        return all(self.satisfied.values())


def audit(problem, channel, tol: float = AUDIT_TOL, with_measures: bool = True) -> Audit:
    """Exact leakage of a channel under each of the problem's notions (docs/spec.md §2, "Exact audit").

    Every value is computed from the notion's definition (probability ratios, sums, entropies)
    on the channel itself, never read back from a solver.

    Parameters
    ----------
    problem : Problem
        The prior, latent secret and notions to audit against.
    channel : array_like, shape (d, m)
        q[x, y] = Pr(Y=y | X=x); rows must sum to 1 (tolerance 1e-9) with entries >= 0.
    tol : float, optional
        Relative tolerance of "satisfied" (default `notions.AUDIT_TOL` = 1e-7).
    with_measures : bool, optional
        Also compute every budget-free measure (default True; sweeps pass False).

    Returns
    -------
    Audit
        `leakage`, `satisfied` and `measures`; `.ok` is True when every notion holds.

    Raises
    ------
    ProblemError
        If the channel has the wrong shape, negative entries or rows that do not sum to 1.
    """
    q = check_channel(problem, channel)
    with one_thread():
        leakage = leakages(problem, q)
    return judged(problem, leakage, tol, Measures(problem, q) if with_measures else {})


def leakages(problem, q: np.ndarray) -> dict:
    """Each notion's leakage of a checked channel, computed from the notion's definition
    (`Notion.leakage`): what `audit` judges.

    Parameters
    ----------
    problem : Problem
        The prior, latent secret and notions.
    q : ndarray, shape (d, m)
        A row-stochastic channel (as `check_channel` returns it).

    Returns
    -------
    dict
        Leakage per notion, keyed as `leakage_keys(problem.privacy)`.
    """
    return {key: notion.leakage(problem, q) for key, notion in zip(leakage_keys(problem.privacy), problem.privacy)}


def judged(problem, leakage: dict, tol: float = AUDIT_TOL, measures: Mapping | None = None) -> Audit:
    """The Audit of a channel whose leakage under the problem's notions is already known.

    Each notion's budget judges its entry with `Notion.satisfied` at relative `tol`, the same
    rule `audit` applies to the leakage it measures.

    Parameters
    ----------
    problem : Problem
        Supplies the notions (and their budgets) that judge the leakage.
    leakage : dict
        Leakage per notion, keyed as `leakage_keys(problem.privacy)`.
    tol : float
        Relative tolerance of the budget check (default `AUDIT_TOL`).
    measures : Mapping, optional
        Utility measures to carry in the Audit (default: none).

    Returns
    -------
    Audit
        The leakage, each notion's verdict and the measures.
    """
    satisfied = {key: notion.satisfied(leakage[key], tol)
                 for key, notion in zip(leakage_keys(problem.privacy), problem.privacy)}
    return Audit(dict(leakage), satisfied, {} if measures is None else measures)
