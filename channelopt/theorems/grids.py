"""The case grids: skewed priors (minimum probability down to 1e-3), eps from 0.1 to 5, d from 2
to 6, latent correlations from weak to strong, interval priors of several widths."""

from __future__ import annotations

import numpy as np

EPS = (0.1, 0.5, 1.0, 2.0, 3.0, 5.0)
EPS_QUICK = (0.1, 1.0, 5.0)
SEED = 20


def eps_grid(quick: bool) -> tuple:
    return EPS_QUICK if quick else EPS


def priors(d: int, quick: bool) -> list[np.ndarray]:
    """Uniform, geometric (ratio 1/3 per symbol), one dominant symbol with the rest at 1e-3, and
    (full grid) two Dirichlet draws; each sums to 1 exactly up to rounding."""
    out = [np.full(d, 1.0 / d)]
    geo = 3.0 ** -np.arange(d)
    out.append(geo / geo.sum())
    out.append(np.r_[1 - (d - 1) * 1e-3, np.full(d - 1, 1e-3)])
    if not quick:
        rng = np.random.default_rng(SEED + d)
        out += list(rng.dirichlet(np.ones(d), size=2))
    return [p / p.sum() for p in out]


def binary_p1(quick: bool) -> tuple:
    return (1e-3, 0.1, 0.5, 0.9) if quick else (1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999)


def dims(quick: bool) -> range:
    return range(2, 5) if quick else range(2, 7)


def latent_binary(quick: bool) -> list[tuple[float, float, float]]:
    """(Pr(G=1), Pr(X=1|G=0), Pr(X=1|G=1)) from weak to strong correlation."""
    pairs = [(0.45, 0.55), (0.3, 0.7), (0.1, 0.9), (0.01, 0.99)]
    gs = (0.3, 0.5) if quick else (0.1, 0.3, 0.5, 0.8)
    pairs = pairs[::2] if quick else pairs
    return [(g, a, b) for g in gs for a, b in pairs]


def intervals(quick: bool) -> list[tuple[float, float]]:
    """[a, b] for Pr(X=1): widths 0 to 0.8 around several centres."""
    full = [(0.1, 0.1), (0.05, 0.15), (0.1, 0.3), (0.3, 0.5), (0.4, 0.6), (0.2, 0.8), (0.01, 0.5), (0.6, 0.9)]
    return full[::2] if quick else full


def clean(v) -> list:
    return [float(x) for x in np.asarray(v, float).ravel()]


def prior_pair_cases(quick: bool) -> list[dict]:
    """Prior sets of two consecutive grid priors (same d), each at every eps of the grid."""
    out = []
    for d in dims(quick):
        ps = priors(d, quick)
        for i in range(len(ps) - 1):
            out += [{"priors": [clean(ps[i]), clean(ps[i + 1])], "epsilon": eps} for eps in eps_grid(quick)]
    return out
