"""Merged inputs: a channel of the whole problem from a small one, for distortion solves under a
time limit.

Sort the inputs by their least-distortion output (for MAE and squared error with outputs on the
input values: by value) and cut them into G groups of consecutive inputs. Merging each group into
one input (its prior mass, its members' distortion averaged under the prior) with one output per
group (the group's least-distortion output) gives a G x G' problem under the same notion. Its
channel, given to every member of a group, is a channel of the whole problem:

- LDP: the rows of a group are equal, so every ratio between two inputs is one between groups;
- LIP with G = X: each Pr(Y = y) is the small problem's, and each row of q is a group's row, so
  every ratio `q[x, y] / Pr(Y = y)` is one of the small problem's.

(It is audited on the whole problem anyway, like every channel.) Its distortion is the small
problem's optimum, an upper bound on the whole problem's, and on the priors tried a close one:
d = 512, Dirichlet(1), eps = 1, 64 groups, LDP MAE 107.859 against the optimum 107.838 (41 ms),
LIP squared error 13,389.4 against 13,383.6 (71 ms); the whole LPs take 35 s and 57 s.
`closed.candidates` offers these channels, finer and finer (`LEVELS`), to a solve under a time
limit whose reduced LP (`top_outputs`, held to 1 - `SHARE` of the limit) has not certified its
optimum, before the LP: what comes back if the time runs out before anything better.
"""

from __future__ import annotations

import time

import numpy as np

from ..notions.ldp import LDP
from ..notions.lip import LIP
from ..problem import Problem
from ..utility import Distortion
from . import top_outputs
from .lp import build, solve_highs
from .result import clean

LEVELS = (32, 64, 128)
"""Groups of the merged problems, coarse to fine; a level is used while it is at most a quarter of
the inputs. d = 512, Dirichlet(1), eps = 1, distortion over the optimum (each level's time, its
pricing included): LDP MAE 1.00046 / 1.0002 / 1.000006 (0.10 / 0.08 / 0.36 s), LIP squared error
1.0016 / 1.00043 / 1.0001 (0.06 / 0.21 / 2.4 s); 16 groups: 1.0012 and 1.0060."""
SHARE = 0.2
"""Share of a solve's time limit kept from the reduced LP for the merged problems (which take what
is left of the limit after the reduced LP, and leave the rest to the whole LP)."""


def applies(problem: Problem) -> bool:
    """One `ldp` notion, or one `lip` notion with G = X, a distortion other than plain Hamming
    (whose closed forms and reduced LP certify in milliseconds) under the problem's own prior, and
    at least 4 LEVELS[0] inputs."""
    if len(problem.privacy) != 1 or type(problem.privacy[0]) not in (LDP, LIP) or problem.latent is not None:
        return False
    u = problem.utility
    return (type(u) is Distortion and not u.plain_hamming(problem) and u.priors is None and u.prior_lower is None
            and problem.d >= 4 * LEVELS[0])


def channels(problem: Problem, deadline: float):
    """The merged problems' channels (d x m), one per level of `LEVELS` that fits in a quarter of
    the inputs, coarse to fine, while the deadline (a `time.perf_counter()` value) allows.

    Yields
    ------
    (ndarray, int, float)
        A channel of the whole problem, its number of groups, and a lower bound on the whole
        problem's distortion: the small problem's row-sum multipliers, spread over each group in
        proportion to P, priced exactly over every output (`top_outputs.priced`, as the reduced
        LP's are). 64 / 128 groups, same problems: LDP MAE 107.790 / 107.811 (the optimum
        107.838), LIP squared error 13,365 / 13,379 (13,384); 18-35 ms a pricing.
    """
    P, d, m = problem.prior, problem.d, problem.m
    D = problem.utility.matrix_for(problem)
    order = np.argsort(problem.utility.least(problem)[0], kind="stable")
    rows = P[order, None] * D[order]                      # the inputs' weighted costs, in group order
    for G in LEVELS:
        left = deadline - time.perf_counter()
        if G > d // 4 or left <= 0:
            return
        starts = np.arange(G) * d // G
        group = np.empty(d, dtype=int)
        group[order] = np.repeat(np.arange(G), np.diff(np.r_[starts, d]))
        mass = np.add.reduceat(P[order], starts)
        if not np.all(mass > 0):
            return
        cost = np.add.reduceat(rows, starts, axis=0)        # G x m: each group's expected cost of each output
        reps = np.unique(np.argmin(cost, axis=1))
        small = Problem(prior=mass / mass.sum(), privacy=problem.privacy,
                        utility=Distortion("distortion", matrix=cost[:, reps] / mass[:, None]), output_size=reps.size)
        prog = build(small)
        raw = solve_highs(prog, time_limit=left, restrict=False)
        if raw.status != "optimal" or raw.z is None:
            return
        qs, _ = clean(prog.channel(raw.z))
        if qs is None or raw.y_eq is None:
            return
        q = np.zeros((d, m))
        q[:, reps] = qs[group]
        # the small problem's row-sum multipliers, each spread over its group in proportion to P,
        # priced exactly over every output of the whole problem: a bound valid whatever they are
        beta = raw.y_eq[:G][group] * P / mass[group]
        yield q, G, top_outputs.bound(problem, D, beta)
