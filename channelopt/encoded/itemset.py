"""Item-set inputs: padding-and-sampling (PS) followed by per-item unary encoding (ID-LDP §VI,
Algorithms 1-2, Eq 12-17). Works for IDUE-PS and, with one (a, b) for all items, OUE-PS and
RAPPOR-PS.

Items are 0..m-1 and the dummies m..m+l-1. PS samples one item of the padded set; by symmetry
item i of x is sampled with probability eta_x / |x| and each dummy with (1 - eta_x) / l, where
eta_x = |x| / max(|x|, l). The output is the unary encoding of the sampled item, so with
rho_k(y_k) as in unary.py,
    Pr(y | x) = B(y) * sum_k pi_x(k) rho_k(y_k),
and the exact worst ratio max_y Pr(y|x)/Pr(y|x') is a 0-1 linear-fractional program whose
parametric form max_y sum_k (pi_x(k) - lam pi_x'(k)) rho_k(y_k) separates over bits; Dinkelbach's
iteration on it terminates at the exact maximum (`pair_ratio`; the tests compare it with all
2^(m+l) outputs).
"""

from __future__ import annotations

from itertools import combinations

from typing import Any

import numpy as np

from ..errors import ProblemError


def check_sets(sets, m: int) -> list[np.ndarray]:
    out = []
    for u, s in enumerate(sets):
        s = np.asarray(sorted(set(int(v) for v in s)), int)
        if s.size == 0:
            raise ProblemError(f"item set of user {u} is empty (every user needs at least one item)")
        bad = s[(s < 0) | (s >= m)]
        if bad.size:
            raise ProblemError(f"item set of user {u} has items outside the domain 0..{m - 1}: {bad.tolist()}")
        out.append(s)
    return out


def _check_l(l: int) -> int:
    if not (float(l).is_integer() and l >= 1):
        raise ProblemError(f"padding length l must be an integer >= 1, got {l!r}")
    return int(l)


def sampling(x, m: int, l: int) -> np.ndarray:
    """pi_x over the m + l items: Pr(PS samples k | x) (Algorithm 1)."""
    l = _check_l(l)
    x = np.asarray(x, int)
    eta = x.size / max(x.size, l)
    pi = np.zeros(m + l)
    pi[x] = eta / x.size
    pi[m:] = (1 - eta) / l
    return pi


def pad_and_sample(sets, m: int, l: int, rng, validate: bool = True) -> np.ndarray:
    """One sampled item per user (Algorithm 1), vectorized over users. Sets are checked first
    (non-empty, items in 0..m-1) unless validate=False (sets already from check_sets)."""
    l = _check_l(l)
    if validate:
        sets = check_sets(sets, m)
    sizes = np.array([len(s) for s in sets])
    n = sizes.size
    slot = rng.integers(0, np.maximum(sizes, l))            # position in the padded set of size max(|x|, l)
    out = m + rng.integers(0, l, size=n)                    # a dummy, if the slot is past the real items
    real = slot < sizes
    # a uniformly random kept item: drop |x| - l at random then pick uniformly == pick uniformly from x
    for u in np.nonzero(real)[0]:
        out[u] = sets[u][slot[u]]
    return out


def counts_of(sampled, a, b, rng) -> np.ndarray:
    """Bit counts C_k of the n perturbed vectors whose sampled items are `sampled` (Algorithm 2):
    C_k = Binomial(n_k, a_k) + Binomial(n - n_k, b_k), which is the exact distribution of the sum
    of the n independent reports' k-th bits."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    nk = np.bincount(sampled, minlength=a.size)
    n = sampled.size
    return rng.binomial(nk, a) + rng.binomial(n - nk, b)


def estimate(bit_counts, n: int, a, b, m: int, l: int) -> np.ndarray:
    """Counts of the m real items: l * (C_i - n b_i) / (a_i - b_i) (ID-LDP §VI-B)."""
    a, b = np.asarray(a, float)[:m], np.asarray(b, float)[:m]
    return _check_l(l) * (np.asarray(bit_counts, float)[:m] - n * b) / (a - b)


def set_budget(x, eps_items, eps_dummy: float, l: int) -> float:
    """ID-LDP Eq 15: eps_x = ln[eta_x sum_{i in x} e^{eps_i} / |x| + (1 - eta_x) e^{eps*}]."""
    x = np.asarray(x, int)
    eta = x.size / max(x.size, _check_l(l))
    return float(np.log(eta * np.exp(np.asarray(eps_items)[x]).mean() + (1 - eta) * np.exp(eps_dummy)))


def lemma2_bound(x, x2, a, b, m: int, l: int) -> float:
    """ID-LDP Eq 13: the claimed bound on Pr(y|x)/Pr(y|x') with alpha = a/b, beta = (1-a)/(1-b)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    alpha, beta = a / b, (1 - a) / (1 - b)
    return float(sampling(x, m, l) @ alpha / (sampling(x2, m, l) @ beta))


def pair_ratio(pi, pi2, a, b, max_iter: int = 200) -> float:
    """Exact max over y in {0,1}^K of sum_k pi_k rho_k(y_k) / sum_k pi2_k rho_k(y_k) (Dinkelbach)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    rho = np.stack([(1 - a) / (1 - b), a / b], axis=1)                   # K x 2
    pick = np.argmax(rho, axis=1)                                       # start: y maximizing the numerator
    lam = 0.0
    for _ in range(max_iter):
        num = (pi * rho[np.arange(rho.shape[0]), pick]).sum()
        den = (pi2 * rho[np.arange(rho.shape[0]), pick]).sum()
        lam_new = num / den
        if lam_new <= lam * (1 + 1e-15):
            return float(max(lam, lam_new))
        lam = lam_new
        pick = np.argmax((pi[:, None] - lam * pi2[:, None]) * rho, axis=1)
    return float(lam)


def all_sets(m: int, max_size: int | None = None):
    """Every non-empty item set of 0..m-1 (up to max_size items)."""
    top = m if max_size is None else max_size
    for k in range(1, top + 1):
        yield from (np.array(c) for c in combinations(range(m), k))


def audit_sets(a, b, m: int, l: int, eps_items, eps_dummy: float, max_size: int | None = None) -> dict:
    """Exact MinID-LDP audit of PS + UE over every pair of item sets of a small domain: for each
    pair, the exact worst log-ratio, the Lemma 2 bound (Eq 13) and the Theorem 4 budget
    min(eps_x, eps_x') (Eq 15). Returns the worst excesses of each claim."""
    sets = list(all_sets(m, max_size))
    pis = [sampling(x, m, l) for x in sets]
    budgets = [set_budget(x, eps_items, eps_dummy, l) for x in sets]
    worst_budget: tuple[float, Any] = (-np.inf, None)
    worst_lemma: tuple[float, Any] = (-np.inf, None)
    for i, j in ((i, j) for i in range(len(sets)) for j in range(len(sets)) if i != j):
        leak = np.log(pair_ratio(pis[i], pis[j], a, b))
        over_b = leak - min(budgets[i], budgets[j])
        over_l = leak - np.log(lemma2_bound(sets[i], sets[j], a, b, m, l))
        if over_b > worst_budget[0]:
            worst_budget = (over_b, (sets[i].tolist(), sets[j].tolist(), float(leak), min(budgets[i], budgets[j])))
        if over_l > worst_lemma[0]:
            worst_lemma = (over_l, (sets[i].tolist(), sets[j].tolist(), float(leak)))
    return {"pairs": len(sets) * (len(sets) - 1), "budget_excess": float(worst_budget[0]),
            "budget_worst": worst_budget[1], "lemma2_excess": float(worst_lemma[0]),
            "lemma2_worst": worst_lemma[1]}
