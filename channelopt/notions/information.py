"""Average-case / information-theoretic notions on X: eps-MIL and eps-MIP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from .base import LinearBlock, Notion, ones_per_column


def mutual_information(prior: np.ndarray, q: np.ndarray) -> float:
    """I(X;Y) in nats (LIP-TDSC Def 3, Eq 3)."""
    joint = prior[:, None] * q
    lam = joint.sum(axis=0)
    pos = joint > 0
    ratio = joint[pos] / (prior[:, None] * lam[None, :])[pos]
    return max(float(np.sum(joint[pos] * np.log(ratio))), 0.0)


@dataclass(frozen=True)
class MIL(Notion):
    """eps-MIL: log sum_y max_x q[x,y] <= eps (LIP-TDSC Def 2).

    Linear with one auxiliary s_y >= q[x,y] per output and sum_y s_y <= e^eps; not
    column-homogeneous (Bayes utilities then use the local method with a relaxation bound).

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0.

    Raises
    ------
    ProblemError
        If epsilon is not a finite positive number within range.
    """

    epsilon: float
    name: ClassVar[str] = "mil"
    homogeneous: ClassVar[bool] = False
    budget_free: ClassVar[bool] = True

    def linear(self, problem) -> LinearBlock:
        d, m = problem.d, problem.m
        A_q = sp.vstack([sp.identity(d * m), sp.csr_matrix((1, d * m))], format="csr")
        A_aux = sp.vstack([-ones_per_column(d, m), np.ones((1, m))], format="csr")
        b = np.concatenate([np.zeros(d * m), [np.exp(self.epsilon)]])
        return LinearBlock(A_q, b, A_aux, np.zeros(m), np.ones(m))

    def leakage(self, problem, q):
        return max(float(np.log(q.max(axis=0).sum())), 0.0)


@dataclass(frozen=True)
class MIP(Notion):
    """eps-MIP: I(X;Y) <= eps nats (LIP-TDSC Def 3).

    Convex in q for a fixed prior; compiled as an exponential-cone constraint through cvxpy's
    rel_entr (the "conic" method).

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0.

    Raises
    ------
    ProblemError
        If epsilon is not a finite positive number within range.
    """

    epsilon: float
    name: ClassVar[str] = "mip"
    homogeneous: ClassVar[bool] = False
    linear_form: ClassVar[bool] = False
    budget_free: ClassVar[bool] = True

    def conic(self, problem, q):
        import cvxpy as cp
        P = problem.prior
        lam = P @ q
        info = cp.sum(cp.multiply(P[:, None], cp.rel_entr(q, np.ones((problem.d, 1)) @ cp.reshape(lam, (1, problem.m), order="C"))))
        return [info <= self.epsilon]

    def smooth(self, problem):
        return [lambda q: self.epsilon - mutual_information(problem.prior, np.clip(q, 0, None))]

    def leakage(self, problem, q):
        return mutual_information(problem.prior, q)
