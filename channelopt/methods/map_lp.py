"""MAP accuracy by one channel LP: the best Bayes guess is post-processing (docs/reliability.md,
"MAP by the Hamming LP").

The MAP gain of a channel q is `sum_y max_x P_x q[x, y] = Pr(xhat(Y) = X)` for the Bayes guess
`xhat(y) = argmax_x P_x q[x, y]`. Relabelling each output by its guess merges outputs, a
deterministic post-processing: every posterior of the merged channel is a mixture of the
original ones, so it stays in the convex admissible set of every column-homogeneous notion
(LIP-TDSC Lemma 1 for LIP). Hence

    max_q MAP gain = max { sum_x P_x q[x, x] : q a d x d channel satisfying the notions }
                   = 1 - min expected Hamming distortion,

an LP with d^2 variables whose dual bound (computed by channelopt from the solver's multipliers,
`lp.Program.dual_bound`) certifies the MAP optimum itself: the LP's channel reaches its own
accuracy with the identity guess, and MAP can only do better. This replaces the posterior-space
column generation for `map` whenever every notion is linear.
"""

from __future__ import annotations

import numpy as np

from ..problem import Problem
from ..utility import Distortion
from .result import PosteriorSolution


def applies(relaxed: Problem) -> bool:
    """Whether MAP of `relaxed` (its homogeneous notions) is the Hamming LP: every notion linear."""
    return relaxed.utility.kind == "map" and all(n.linear_form for n in relaxed.privacy)


def hamming_problem(relaxed: Problem) -> Problem:
    """The same prior and notions, Hamming distortion, outputs = inputs (the guesses)."""
    return Problem(prior=relaxed.prior, latent=relaxed.latent, values=relaxed.values,
                   privacy=list(relaxed.privacy), utility=Distortion("hamming"), output_size=relaxed.d)


def posterior_solution(q: np.ndarray, P: np.ndarray, distortion_bound: float) -> PosteriorSolution:
    """The LP's channel as used posteriors and weights; gain = its MAP accuracy, bound = 1 - the
    LP's certified lower bound on the Hamming distortion."""
    joint = P[:, None] * q
    w = joint.sum(axis=0)
    used = w > 0
    V = (joint[:, used] / w[used]).T
    gain = float(joint.max(axis=0).sum())
    info = {"columns": int(used.sum()), "pricing": "none (one Hamming LP)"}
    return PosteriorSolution(V, w[used], gain, 1.0 - float(distortion_bound), info)
