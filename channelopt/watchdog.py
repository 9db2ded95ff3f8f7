"""The asymmetric privacy watchdog (ALIP §II-B, Definition 2, Proposition 2; docs/spec.md §5).

From a joint Pr(S, X) and budgets (eps_l, eps_u): the lift of symbol x is l(s, x) = Pr(s|x)/Pr(s);
x is low-risk if e^-eps_l <= l(s, x) <= e^eps_u for every s. Low-risk symbols are released as they
are; all high-risk symbols are merged into one super-symbol (complete merging: an X-invariant
randomization of X_H, which by ALIP Prop 2 attains the smallest possible max log-lift and the
largest possible min log-lift among all randomizations of X_H). The super-symbol's lift is
Pr(s | X in X_H) / Pr(s).

Repair. The merged symbol can still violate the budget. Rule used here: while it does, move into
X_H the low-risk symbol whose addition leaves the smallest violation of the merged symbol
(violation = max(max log-lift - eps_u, -min log-lift - eps_l, 0)); ties go to the least probable
symbol. Merging everything gives lift 1 (no leakage), so the loop ends with a feasible mechanism.

Utility: NMI = I(X;Y)/H(X) with I(X;Y) = H(Y), the map being deterministic.

Zero probabilities: secrets s with Pr(s) = 0 carry no lift constraint and are ignored; symbols x
with Pr(x) = 0 are rejected (their lift is undefined): drop them from the joint first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import ProblemError


def _entropy(p) -> float:
    p = np.asarray(p, float)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def check_joint(joint) -> np.ndarray:
    """Pr(S, X) as an |S| x |X| array: entries >= 0, total 1, every symbol x with Pr(x) > 0."""
    J = np.asarray(joint, float)
    if J.ndim != 2 or J.shape[1] < 2 or J.shape[0] < 1:
        raise ProblemError(f"joint must be a matrix Pr(S, X) with at least 2 columns, got shape {J.shape}")
    if not np.all(np.isfinite(J)) or np.any(J < 0):
        raise ProblemError("joint entries must be finite and >= 0")
    if abs(J.sum() - 1) > 1e-9:
        raise ProblemError(f"joint must sum to 1, got {float(J.sum())!r}")
    px = J.sum(axis=0)
    if np.any(px <= 0):
        raise ProblemError(f"joint: symbol x = {int(np.argmin(px))} has Pr(x) = 0 (its lift is undefined); "
                           "drop it from the joint")
    return J


def log_lifts(J: np.ndarray, cols) -> tuple[float, float]:
    """(max log-lift, min log-lift) over secrets with Pr(s) > 0 of the merged symbol X in cols."""
    ps = J.sum(axis=1)
    keep = ps > 0
    merged = J[keep][:, cols].sum(axis=1)
    with np.errstate(divide="ignore"):
        ll = np.log(merged / merged.sum()) - np.log(ps[keep])
    return float(ll.max()), float(ll.min())


@dataclass
class Watchdog:
    low: list
    high: list
    channel: np.ndarray            # |X| x |Y| deterministic map (last column: the super-symbol, if any)
    nmi: float
    merged_lifts: tuple | None     # (max, min) log-lift of the super-symbol, ALIP Prop 2 bounds
    attained_before_repair: bool
    moved: list = field(default_factory=list)

    def leakage(self, J) -> tuple[float, float]:
        """(max log-lift, -min log-lift) over all released symbols."""
        hi, lo = [], []
        for c in range(self.channel.shape[1]):
            cols = np.nonzero(self.channel[:, c] > 0)[0]
            a, b = log_lifts(J, cols)
            hi.append(a)
            lo.append(b)
        return max(hi), -min(lo)


def _violation(J, cols, eps_l, eps_u) -> float:
    if not len(cols):
        return 0.0
    up, low = log_lifts(J, cols)
    return max(up - eps_u, -low - eps_l, 0.0)


def watchdog(joint, eps_l: float, eps_u: float, repair: bool = True) -> Watchdog:
    for name, v in (("eps_l", eps_l), ("eps_u", eps_u)):
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
            raise ProblemError(f"{name} must be a finite number >= 0, got {v!r}")
    J = check_joint(joint)
    d = J.shape[1]
    ps = J.sum(axis=1)
    keep = ps > 0
    lift = (J[keep] / J.sum(axis=0)) / ps[keep, None]
    with np.errstate(divide="ignore"):
        ll = np.log(lift)
    low_mask = (ll.max(axis=0) <= eps_u + 1e-12) & (ll.min(axis=0) >= -eps_l - 1e-12)
    low, high = list(np.nonzero(low_mask)[0]), list(np.nonzero(~low_mask)[0])
    attained = _violation(J, high, eps_l, eps_u) <= 1e-12
    moved = []
    if repair:
        px = J.sum(axis=0)
        while high and _violation(J, high, eps_l, eps_u) > 1e-12 and low:
            scores = [(_violation(J, high + [x], eps_l, eps_u), px[x], x) for x in low]
            _, _, x = min(scores)
            low.remove(x)
            high.append(x)
            moved.append(int(x))
        if not low and high and _violation(J, high, eps_l, eps_u) > 1e-12:
            raise ProblemError("watchdog: merging every symbol still violates the budget")   # cannot happen: lift 1
    m = len(low) + (1 if high else 0)
    q = np.zeros((d, m))
    for k, x in enumerate(low):
        q[x, k] = 1.0
    if high:
        q[high, -1] = 1.0
    lam = J.sum(axis=0) @ q
    hx = _entropy(J.sum(axis=0))
    nmi = max(_entropy(lam), 0.0) / hx if hx > 0 else 0.0
    return Watchdog([int(x) for x in low], sorted(int(x) for x in high), q, nmi,
                    log_lifts(J, high) if high else None, bool(attained), moved)


def optimum_nmi(J: np.ndarray, eps_l: float, eps_u: float) -> float | None:
    """NMI of the certified optimal channel for the same ALIP constraints (posterior-space LP), or
    None when the solver cannot certify one (callers count those instead of guessing)."""
    from .methods import solve
    from .notions import ALIP
    from .problem import Joint, Problem
    from .utility import Bayes
    PS = J.sum(axis=1)
    r = solve(Problem(prior=J.sum(axis=0), latent=Joint(PS, J / PS[:, None]), privacy=[ALIP(eps_l, eps_u)],
                      utility=Bayes("mutual-information", normalized=True)))
    return r.objective if r.status == "optimal" else None


def random_joint(n_s: int, n_x: int, rng, concentration: float = 1.0) -> np.ndarray:
    """A random Pr(S, X): Dirichlet over the |S| |X| cells (every symbol kept with positive mass)."""
    J = rng.dirichlet(np.full(n_s * n_x, concentration)).reshape(n_s, n_x)
    return J
