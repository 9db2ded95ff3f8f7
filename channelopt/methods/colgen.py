"""Column generation for the posterior-space LP over a closed-form family
(docs/reliability.md, "Certified Bayes optima at large d").

The master LP `maximize gains . w  s.t.  sum_i w_i v_i / P = 1, w >= 0` stays in one HiGHS model
and each round adds the columns the structured pricing (`structured.Family.price`) returns, so
every solve starts from the previous optimal basis. After any round, with mu the master's duals,

    gain(any channel) <= mu . P + max_{v in K} (phi(v) - mu . v)

(weak duality; `sum_v w_v = 1` for every channel), and the pricing returns a valid upper bound
on the max: the bound holds whenever the loop stops, by convergence, time or round limit.

Where the master is degenerate and its duals wander (LDP histogram-MSE), pricing rounds move to
the level method's points once its value stalls (`LEVEL`, `_level_point`).

bayes-mse is solved on the centred and scaled target `(h - h.P) / sd(h)`, which leaves the
optimal channel unchanged (the MSE of an affine image of the estimate scales by sd^2) and keeps
phi of order 1 for any values and offset.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from dataclasses import dataclass

import clarabel
import numpy as np
from scipy import sparse

from ..errors import SolverError
from ..solvers import quiet_highs
from ..utility import entropy_rows
from .structured import LOW_LOSS_DEPTH, MAX_NODES, SEPARABLE, Family, LIPBox, Priced
from .lp import set_time_limit
from .posterior import noise, polish
from .result import PosteriorSolution, reported_bound

GAP_TOL = 1e-9
"""Stop when the bound is within this of the value, relative to the utility's natural scale."""
MAX_ROUNDS = 5000
SMOOTHING = 0.8
"""Wentges smoothing weight of the best dual point (0 turns stabilization off)."""
MAX_COST_SCALE = 1e6
"""The largest factor `Master.rescale` applies to the master's costs (1 / the natural objective
after the first round, at least 1)."""
COARSE_MIN, COARSE_GAP = 48, 1e-6
"""bayes-mse above COARSE_MIN symbols starts from the pair-merged problem, solved to COARSE_GAP."""
MERGED_SHARE = 0.6
"""Each merged problem (`solve_merged`) stops at this share of the time left when it starts, and
hands over its channel as it is: the problem it starts is left the rest. d = 1024, 60 s: five of 24
runs (three seeds, eps 0.5..4) had spent the whole minute in the merged problems; Dirichlet
eps = 0.5 seed 2 went 1.8e-2 -> 8.1e-6 of the MSE, Zipf eps = 0.5 / 1 seed 2 2.1e-2 / 4.9e-2 ->
5.9e-5 / 1.2e-3; the runs certified before took the same time (d = 512 too)."""
PRICING_RATIO = 0.5
"""A pricing round may stop once its best column reaches this fraction of its open bound."""
ASCENT, ASCENT_RUN = frozenset({"histogram-mse"}), 10
"""Utilities that try `Family.ascend` (a cheap heuristic pricing) before the branch and bound, at
most ASCENT_RUN rounds in a row (then a branch and bound round moves the bound). Measured at
d = 64 under LIP: histogram-MSE reaches its gap 2-3x sooner; mutual information cycled without
progress, LDP gained nothing, so they price by branch and bound only."""
LOW_LOSS_COLUMNS, LOW_LOSS_BATCH, LOW_LOSS_PROGRESS = {"lip": 8, "ldp": 32}, 2, 0.5
"""Where the family has a chord bound (separable utilities under LIP, mutual information under
LDP), up to LOW_LOSS_COLUMNS[family] * d `Family.low_loss` vertices, the columns that approach it,
go in LOW_LOSS_BATCH * d a round, before pricing, while the gap to it falls below LOW_LOSS_PROGRESS
times what it was at the last batch. LDP's 32d: at d = 64, eps = 2, 8d left the gap at 4e-5 and the
branch and bound took 15 s to close it; 32d closes it in 0.8 s. A batch whenever the gap fell by 10%
(0.9) or at all (1.0) instead of by half took 21-27 s against 10.5-18.7 s (LDP, d = 64, eps = 4);
another batch right after one that cut it by 20%, 40 s against 29 s over five d = 64 cases."""
NODE_MEMORY = 1.5e9
"""Bytes for the nodes of one pricing call (each holds its box, two d-vectors, and a few scalars
in `structured._Nodes`, and a heap entry: about 16 d + 240 bytes, 1,260 measured at d = 64; a
search keeps at most its budget plus one open): the node budget, multiplied by 4 each time a
pricing call gives up, stops at NODE_MEMORY / (16 d + 240) (d = 64: 1,186,708 nodes), and a call
that gives up there ends the search (`stopped = "max_nodes"`). Unbounded, a mutual-information
solve under LIP at d = 64 (eps = 2, 120 s) grew past 5 GB (when a node also held its fill
point and chord gaps, 32 d + 400 bytes)."""
PRUNE = {"lip": (12, 4), "ldp": (4, 2)}
"""Per family (at, keep): unused columns beyond at * d are pruned to keep * d (largest reduced costs
kept). Measured on bayes-mse at d = 256 (first seed, two solves side by side): under LDP, (4, 2)
certifies Dirichlet eps = 0.5/1/4 in 32/18/6 s and Zipf 0.5/2 in 19/20 s, against 60+/48/10 and
60/27 s with (12, 4); under LIP it lost Dirichlet eps = 1 (60 s against 16.5 s), so LIP keeps (12, 4)."""
PRUNE_FLOOR = (512, 256)
"""(at, keep) at least these many columns, whatever d: a master of d rows and 512 columns costs
little, and at small d the multiples above threw away the columns an optimum needs together. LDP
mutual information at d = 20, eps 0.05 / 0.1 (4 priors each, 10 s): pruned at 80 to 40 columns the
master sat on a two-output channel 2.8e-4..6.2e-3 below the KL bound on 6 of 8 priors (the others
attain it with 20 outputs); with the floor all 8 are certified in 0.0-0.8 s. The same with a floor
of (240, 120): 6 of 8."""
SHAPE_SHARE = 0.1
"""At most this share of the time left goes to `Family.shape_bound` (0.2-0.9 s at d = 20..128,
0.3-5 s at d = 1024; stopped early it stays valid, only looser)."""
LEVEL = {("ldp", "histogram-mse"): (20, 0.2)}
"""Per (family, utility): (rounds, lambda) of the level method. Once the master's value has
closed less than 1e-3 of the open gap in each of `rounds` rounds (or pricing near its duals gave
up at the node budget), each pricing round prices exactly at the projection of the best dual
point (at first the shape bound's) on the set where the master's model of the dual function is at
most `value + lambda (bound - value)` (`_level_point`), and adds the columns that cut the model
there. The master's value settles in seconds while its duals jump between vertices of a
degenerate face (LDP histogram-MSE, d = 64, eps = 1: at the final duals of a 60 s run exact
pricing still found a column worth 1.3e-4 and the bound ended 1.0e-6 above); the projections move
the bound instead: certified to 1e-9 in 14 s. lambda 0.1 / 0.2 / 0.3 / 0.5: 14.3 / 13.9 / 17.3 /
26.7 s; 5 / 20 / 50 flat rounds (lambda 0.3 / 0.2): 21.2 / 13.9 / 17.6 s. Its pricing is exact (ratio 1):
at ratio 0.5 eps = 2 did not close in 60 s (30 s exact). After a level point where no column cuts
the model, lambda is LEVEL_LOW for one round. Not used for bayes-mse under LIP: at eps = 1 it
closed gaps 10-40x further at d = 512 (6.5e-4 -> 1.7e-5, Dirichlet), but at d = 1024, eps = 4
the level points' QPs (2,600-4,900 columns) took 56 of 60 s and the gap went from <= 4.9e-9 to 2.3e-2,
and at d = 256 it was 1.3-3x slower than the stall rule. Re-measured with the QP on a working
set (`_projection`) and LEVEL_QP_SHARE (d = 1024, seed 0, 60 s, with / without): Dirichlet
eps = 0.5 / 1 / 2 gaps 4.1e-5 / 2.6e-4 / 1.8e-3 against 1.2e-4 / 3.1e-4 / 1.8e-3, Zipf eps = 0.5
2.5e-5 against 6.6e-5; Dirichlet eps = 4 1.2e-2 against certified in 22 s: still not used.
Measured again on 934c44b (seed 0, 60 s, gap relative to the MSE): from d = 384 up it closes
more where the stall rule stalls (d = 384 / 512 Dirichlet eps = 1: 3.4e-4 / 4.6e-4 -> 2.1e-5 /
8.7e-6; d = 512 Dirichlet eps = 0.5 1.1e-4 -> 3.3e-6, Zipf eps = 1 3.0e-4 -> 5.1e-6), yet on the
d = 256 grid it doubles the time (Dirichlet eps = 0.5 / 1: 11.5 / 5.9 -> 25.4 / 12.7 s) and loses
Zipf eps = 0.5 (5.6e-7 at 60 s). Only from d = 512 with its coarse stage given half the time left:
d = 1024 Dirichlet eps = 1 2.6e-4 -> 6.3e-5, but eps = 4 certified in 21 s -> 5.6e-3 (the d = 512
stage 2.0 -> 18.2 s). Triggered after 60 stalled rounds instead of 20 it spares d = 1024 eps = 4
(20 s) and d = 256 Zipf eps = 0.5 (14 s) but leaves d = 512 Dirichlet eps = 1 at 1.1e-4; after 40,
eps = 4 takes 59 s and the d = 256 cell is lost again: no trigger measured is both. With exact
projections (`_least_distance`, 0.8-1.1 s a point at d = 1024) it is still not: d = 1024, seed 0,
60 s, Dirichlet eps = 1 / 4: gaps 3.0e-2 / 8.0e-3 against 1.5e-2 / certified in 43 s (the QP was
not what held it back: the loop gets 4-5 rounds in a minute at eps = 1, after its merged starts)."""
LEVEL_LOW = 0.01
"""lambda after a level point where no column cuts the model: nearly the master's optimal dual face
(exact pricing there certifies or cuts), with room for `_level_point` to meet the level exactly.
0.2 throughout: Dirichlet d = 64 as fast at eps = 0.5, up to 60% slower at eps = 1..4."""
LEVEL_QP_SHARE = 0.25
"""At most this share of the time left goes to one level point's QP; stopped early, its point is
still a dual point (moved onto its level by `_level_point`). d = 1024 (LDP histogram-MSE, eps = 4)
once spent 51 s of a 60 s limit in one QP and ended 1.6 s late."""
LEVEL_HELD = 4
"""The columns added by the last LEVEL_HELD level rounds are never pruned, nor the cuts active at
the last projection (`_level_point`): the model must keep them, or the projections cycle (pruned
by reduced cost at the master's duals, or at the last level point with (16, 8): d = 64 and 12,
two or three points repeated until the time limit; with the last 4 rounds' cuts held but not the
active ones, a cycle of 5 points held a d = 64 run at a gap of 8.9e-5 for 40 s)."""
NEAR_CLOSE = 100.0
"""`Family.near_ties` searches finer (`fine`) once the master is within NEAR_CLOSE times the gap
target of the chord bound (less the face loss): there the plateau is what is left. Measured at
the calls of four d = 64 cells, the master's distance to that bound in gap targets: 0.2-4.9
(mutual information, Zipf eps = 1), 4-15 (Dirichlet eps = 2), 4e4 and 1e6 (histogram-MSE and
mutual information, Zipf eps = 4, certified by the branch and bound, not the chord bound)."""
NEAR_MISSES = 2
"""`LIPBox.near_ties` is tried where the branch and bound's search gives up without a column, until
it has found nothing NEAR_MISSES times in a row (a call costs 0.1 s at d = 64 with
`structured.NEAR_TIES`; where the plateau is not what stops the search, histogram-MSE Zipf eps = 4,
calling it, with sets of 16, at every such round doubled the run)."""
TIED_SKIP, TIED_EVERY = 2, 4
"""Once the branch and bound has given up without a column and `Family.near_ties` has found columns
in TIED_SKIP rounds in a row (the plateau of tied coordinates, where the search's nodes find
nothing), the rounds that follow price by `near_ties` alone, at the master's duals, for as long as
it finds columns; every TIED_EVERY-th of them runs the search again (its bound, and its columns
once the plateau is left). The skipped searches gave no column and a bound above the binding one:
mutual information under LIP, Dirichlet, d = 64, eps = 2, went through the same rounds in a third
of the time (4.4e-9 at 19.5 s against 60 s); at d = 256, Zipf(1.1), eps = 0.5 / 4 it was certified
to 8.9e-10 in 56 / 57 s where it had ended 1.6e-9 / 1.8e-9 short at 60 s."""
STALL = {"lip": (20, (0.95, 0.5, 0.2)), "ldp": None}
"""Per family (rounds, alphas): once the master's value has not risen for `rounds` rounds (a
degenerate master whose duals jump between optimal vertices), each pricing round also prices at
alpha * mu_best + (1 - alpha) * mu for these alphas, keeping every bound (each is valid) and every
column. Measured on bayes-mse, d = 256 (LIP, 11 cells, seeds 0 and 1, two solves side by side):
the two cells that did not close in 60 s (Dirichlet eps = 1 seed 0, eps = 0.5 seed 1; gaps 2.8e-7,
8.6e-9) close in 7.9 and 14.3 s; the others move by -20%..+30% (Zipf eps = 1: 9.2 -> 12.1 s and
17 -> 30 s). Under LDP it slowed both cells tried (Dirichlet / Zipf eps = 1: 15 -> 22 s, 16 -> 34 s),
so LDP does not use it. bayes-mse only: its pricing is a one-dimensional search that costs
milliseconds next to a stalled master's 0.1-1 s; the separable pricings are branch and bounds."""
SLACK_FLAT: int | None = 3
"""bayes-mse under LIP from `_refined_start` (None: never): once the master's value has not risen for
SLACK_FLAT rounds, each round also prices exactly at `_slack_point` (complementary slackness with
the columns in use, centred), keeping its bound, its columns, and them as its next cuts; after a
failed program, again once the value has risen (`_refined_start`'s second merged problem too). From
`_refined_start`'s channel (Dirichlet seed 0, eps = 1): d = 256 certified in 12 rounds, 3.1 s
(6.4 s, 212 rounds without); d = 512 in 14 rounds, 17 s (60 s and a gap of 2.7e-4 without). At d = 1024
its program (117 columns in use, 120k rows) takes 6.4 s an interior point solve (HiGHS's IPX; HiPO
is no faster: docs/reliability.md), so the loop gets a few rounds. The second merged problem of `_refined_start` is priced at
slack points too (`solve_merged(slack=True)`): at d = 1024 its value was flat while the smoothing's
bound crawled (272 groups, eps = 1: 99 rounds, 3.0e-4 at 55 s, and the run ended 9.0e-2 from its
bound); with them it is certified in 18-27 s, and the run ends at 7.4e-5..1.6e-4 (eps = 1) and
4.6e-3 (eps = 0.5, was 1.6e-2) at 60 s. Waiting after a slack point that does not lower the bound
(for the value to close a tenth of the gap, or 2, 4, 8... rounds) ends d = 1024 at 5.8e-6 / 1.6e-4,
but made d = 512 cells 2-6x slower (Dirichlet eps = 1: 13 -> 28 s, Zipf eps = 0.5: 6 -> 37 s);
waiting as long again as the slack point took, Zipf eps = 1: 17 -> 39 s. Not kept. Not from
`_coarse_start`, whose channel is far from optimal while its value still rises: there the program is
infeasible round after round (d = 256, eps = 1: 9.1 s against 6.4 s) and at d = 1024, eps = 4 the
loop did not close in 60 s (4.1e-2) where it certifies in 18 s without."""
SLACK_CUTS = 4000
"""At most this many columns priced at the last slack points are kept as `_slack_point`'s cuts."""
SLACK_EXCESS, SLACK_GROWTH = 2, 1.1
"""After SLACK_EXCESS slack points in a row whose program's excess (`_slack_point`: the least total
violation of the thresholds, 0 when the columns in use are optimal) exceeds the gap left and grew
by SLACK_GROWTH or more since the last point, the loop waits for the value to rise before the next
one, as after a failed program: the cuts contradict those columns, which are not optimal, and the
points priced near their face do not lower the bound. A start built from a coarser problem's
channel can sit on such a face for many rounds of a degenerate master: d = 1024, eps = 0.5,
Dirichlet seed 0, the second merged problem of `_refined_start` (278 groups) kept its start's value
for 50 rounds while 30 slack points (0.3-1.5 s each; excess 1e-4 -> 5e-2 as the cuts grew, against
a gap of 8e-6) left its bound where the first one put it: 45 s, 30 s with the wait, and the run
ended 2.2e-4 from its bound at 60 s instead of 4.6e-3. Where the channel is optimal the excess is
round-off (d = 512, the full problem: 1e-19..1e-10). Neither one excessive point (d = 512, Zipf
eps = 1 has single ones, 1.5e-5 and 1.8e-3, between optimal faces: waiting after each left it at
1.0e-7 at 60 s, where it certifies in 17 s) nor a steady one (1e-8, a channel expanded from a merged
problem, d = 1024, Zipf eps = 0.5: waiting at such left it at 1.1e-8) is a reason to wait."""


ADD_ENTRIES = 1 << 22
"""`Master.add` passes its columns to HiGHS in batches of at most this many entries (columns times
d): its temporaries (u = post / P, the masks, the sparse form) are a few copies of a batch, not of
all the columns (d = 4000, LDP: 12.5 GB at peak with the starting columns in one batch)."""


MASTER_PIVOTS, MASTER_PIVOTS_PER_ROW = 2_000, 5
"""The warm primal simplex solve of the master stops after max(MASTER_PIVOTS, MASTER_PIVOTS_PER_ROW d)
pivots and goes to the fallbacks of `Master.solve`: past that it is cycling through degenerate
pivots. bayes-mse under LIP, d = 1024, eps = 0.5, the refined problem of `_refined_start` (278
groups): one round's solve ran 225,510 pivots and 47.7 s to the time limit, where the rounds before
took 100-800; with the limit (2,000 pivots here) the fallback's dual simplex takes 500-1,900 and the
problem is certified in 32 s. At a limit of 20,000 pivots each stalled solve still cost about 4 s.
The warm dual simplex of the fallbacks can cycle too (eps = 2, Zipf(1.1), 304 groups: 282,719
pivots, 35 s to the time limit), so it stops at the same limit and the cold primal one at 10 times
it (there: 12,085 pivots, 1.9 s; the problem certified in 28 s)."""


class Master:
    """The master LP, kept in one HiGHS model to which columns are added (warm starts).

    Every column is stored sparsely as `u_i = b_i 1 + delta_i` with `b_i` its most common entry
    (e^-eps or e^eps for LIP, 1/tau or e^eps/tau for LDP), so `delta_i` is zero on most symbols.
    With one free auxiliary z and the row `z - sum_i b_i w_i = 0`, the rows
    `z + sum_i w_i delta_i[x] = 1` say `sum_i w_i u_i = 1`, and the duals y of these rows satisfy
    `sum_x y_x u_i[x] >= gain_i` for every column (eliminate z): mu = y / P in posterior coordinates.

    Given an `order` of the symbols (bayes-mse: the order of the target h, along which its
    columns are piecewise constant, a few runs of e^eps and e^-eps), the rows are instead the
    first differences of `sum_i w_i u_i = 1` in that order, `T sum_i w_i u_i = T 1 = e_0`: a
    column with r runs has about 2 r nonzeros instead of a quarter of d, and the basis stays
    sparse (d = 256: a third of the master's time). The duals map back by `y = T' y'`.
    """

    def __init__(self, P: np.ndarray, order: np.ndarray | None = None):
        import highspy

        self.hp = highspy
        self.P = np.asarray(P, dtype=float)
        self.order = None if order is None else np.asarray(order)
        d = self.P.size
        h = quiet_highs()
        h.setOptionValue("primal_feasibility_tolerance", 1e-10)
        h.setOptionValue("dual_feasibility_tolerance", 1e-10)
        h.setOptionValue("simplex_strategy", 4)   # primal: added columns keep the basis primal feasible
        inf = highspy.kHighsInf
        if self.order is None:
            h.addRows(d + 1, np.r_[np.ones(d), 0.0], np.r_[np.ones(d), 0.0], 0, np.zeros(0, np.int32),
                      np.zeros(0, np.int32), np.zeros(0))
            h.addCols(1, np.zeros(1), np.array([-inf]), np.array([inf]), d + 1, np.zeros(1, np.int32),
                      np.arange(d + 1, dtype=np.int32), np.ones(d + 1))
        else:
            rhs = np.zeros(d)
            rhs[0] = 1.0
            h.addRows(d, rhs, rhs, 0, np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.offset = 1 if self.order is None else 0     # the z column comes first
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.h = h
        self.V = np.zeros((0, d))
        self.gains = np.zeros(0)
        self.w_last = np.zeros(0)
        """The last optimal weights, kept aligned with the columns (new ones at 0, pruned ones out):
        a channel whatever stops the next solve."""
        self.mu_best: np.ndarray | None = None
        """The dual point with the lowest bound found by the loop (set by `_generate`)."""
        self.scale = 1.0
        """HiGHS's costs are the gains times this (`rescale`)."""

    def rescale(self, scale: float) -> None:
        """Give HiGHS the costs `scale * gain` instead of the gains: the same optimum, duals mapped
        back by `solve`. HiGHS's dual feasibility tolerance is absolute (at least 1e-10): where the
        objective is small (mutual information at eps = 0.05, I(X; Y) = 1.2e-3) a column worth
        2.5e-12..1e-10 at the master's duals, above the pricing tolerance (3e-13) and needed for a
        gap of 1e-9 of I(X; Y), was left out as dual feasible round after round and the master
        stalled (LIP, d = 20: 4.8e-6 from its bound at 30 s). On the objective's own scale it enters.
        (The costs `scale * (gain - value)`, the same optimum, made one cell far worse: LDP mutual
        information, Zipf(1.1), d = 64, eps = 0.1: 5,000 rounds and a gap of 1.2e-3, against
        0.6 s with the gains scaled alone and 3.5 s unscaled.)"""
        self.scale = float(scale)
        n = len(self.V)
        if n:
            self.h.changeColsCost(n, np.arange(self.offset, self.offset + n, dtype=np.int32), self.scale * self.gains)

    def add(self, V: np.ndarray, gains: np.ndarray) -> None:
        V = np.atleast_2d(V)
        if not len(V):
            return
        gains = np.asarray(gains, dtype=float)
        step = max(1, ADD_ENTRIES // self.P.size)     # columns a batch: the temporaries stay small
        for i in range(0, len(V), step):
            self._add(V[i:i + step], gains[i:i + step])
        self.V = np.vstack([self.V, V])
        self.w_last = np.r_[self.w_last, np.zeros(len(V))]
        self.gains = np.concatenate([self.gains, gains])

    def _add(self, V: np.ndarray, gains: np.ndarray) -> None:
        """`add`'s columns V to HiGHS's model (sparse, as the class says)."""
        U = V / self.P[None, :]
        hi = U.max(axis=1, keepdims=True)
        if self.order is not None:
            A = np.diff(U[:, self.order], axis=1, prepend=0.0)
            A[np.abs(A) <= 1e-12 * hi] = 0.0           # equal entries, up to the round-off of expanded columns
        else:
            lo = U.min(axis=1, keepdims=True)
            at_lo = np.abs(U - lo) <= 1e-12 * hi
            at_hi = np.abs(U - hi) <= 1e-12 * hi
            base = np.where(at_lo.sum(axis=1, keepdims=True) >= at_hi.sum(axis=1, keepdims=True), lo, hi)
            delta = np.where(np.abs(U - base) <= 1e-12 * hi, 0.0, U - base)
            A = np.hstack([delta, -base])              # rows 0..d-1, then the z-row
        nz = A != 0
        counts = nz.sum(axis=1)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
        idx = np.nonzero(nz)[1].astype(np.int32)
        self.h.addCols(len(V), self.scale * gains, np.zeros(len(V)), np.full(len(V), np.inf),
                       int(counts.sum()), starts, idx, A[nz])

    def solve(self, deadline: float = np.inf) -> tuple[np.ndarray, np.ndarray | None]:
        """(weights w, duals mu in posterior coordinates); mu is None when the deadline stopped
        HiGHS first, and w is then the primal simplex's last iterate (feasible: the warm start is,
        and primal simplex keeps it so), no worse than the previous round's optimum, or that
        optimum itself when no feasible iterate is at hand (a stop during the fallbacks)."""
        h, optimal = self.h, self.hp.HighsModelStatus.kOptimal
        left = deadline - time.perf_counter()
        set_time_limit(h, max(left, 1e-3))
        pivots = max(MASTER_PIVOTS, MASTER_PIVOTS_PER_ROW * self.P.size)
        h.setOptionValue("simplex_iteration_limit", pivots)
        h.run()
        if h.getModelStatus() == self.hp.HighsModelStatus.kTimeLimit:
            if h.getInfo().primal_solution_status == 2:                      # 2: feasible
                return np.maximum(np.asarray(h.getSolution().col_value)[self.offset:], 0.0), None
            return self.w_last.copy(), None
        if h.getModelStatus() != optimal:
            # the warm primal simplex stalled (or passed its pivot limit): the dual simplex, then from
            # scratch the primal one, then the dual one without presolve, the first two with pivot
            # limits too (MASTER_PIVOTS: the warm dual simplex can cycle as well). The master is
            # feasible (the prior's column alone is), yet a cold dual simplex after presolve has
            # called it infeasible (LDP histogram-MSE, d = 64, after 1,740 rounds; the same model
            # solved by the other two)
            timed_out = self.hp.HighsModelStatus.kTimeLimit
            for strategy, cold, limit in ((1, False, pivots), (4, True, 10 * pivots), (1, True, self.hp.kHighsIInf)):
                h.setOptionValue("simplex_strategy", strategy)
                h.setOptionValue("presolve", "off" if strategy == 1 and cold else "choose")
                h.setOptionValue("simplex_iteration_limit", limit)
                if cold:
                    h.clearSolver()
                h.run()
                if h.getModelStatus() in (optimal, timed_out):
                    break
            h.setOptionValue("simplex_strategy", 4)
            h.setOptionValue("presolve", "choose")
            if h.getModelStatus() == timed_out:   # a dual simplex iterate is no channel: the last optimum
                return self.w_last.copy(), None
        if h.getModelStatus() != optimal:
            raise SolverError("the posterior-space master LP failed (HiGHS: "
                              + h.modelStatusToString(h.getModelStatus()) + ")")
        sol = h.getSolution()
        w = np.maximum(np.asarray(sol.col_value)[self.offset:], 0.0)
        self.w_last = w.copy()
        if self.order is None:
            y = np.asarray(sol.row_dual)[:-1]
        else:
            yt = np.asarray(sol.row_dual)
            y = np.empty_like(yt)
            y[self.order] = yt - np.r_[yt[1:], 0.0]   # y = T' y'
        return w, y / (self.scale * self.P)           # (the duals of the costs scale * gain)

    def polish(self, w: np.ndarray) -> np.ndarray:
        """w with its columns in use refined by one least-squares correction of their residual
        `sum_i w_i v_i - P` (kept only if still >= 0 and closer; also the new `w_last`). HiGHS
        meets the rows to its tolerance, which moves the value of the channel built from w: LIP
        mutual information, Zipf(1.1), d = 64, eps = 0.1 had a residual of 3.9e-13 and a value
        3.3e-12 above its channel's (6.6e-10 of I(X; Y)), so a gap of 4.3e-10 was reported as
        1.13e-9. The loop polishes where its gap test passes and tests again."""
        out = polish(self.V, w, self.P)
        if out is not w:
            self.w_last = out.copy()
        return out

    def prune(self, mu: np.ndarray, w: np.ndarray, keep: int) -> None:
        """Drop all but `keep` unused columns (the ones with the largest reduced costs). The prior's
        own column (u = 1, the channel that reveals nothing) is never dropped: it alone keeps the
        master feasible exactly, where the columns in use do only within the LP's tolerance."""
        n = len(self.V)
        if n <= keep:
            return
        rc = self.gains - self.V @ mu
        unused = np.flatnonzero((w <= 0) & np.any(np.abs(self.V - self.P) > 1e-15, axis=1))
        if unused.size <= keep:
            return
        drop = unused[np.argsort(-rc[unused], kind="stable")[keep:]]
        mask = np.zeros(n, dtype=bool)
        mask[drop] = True
        self.h.deleteCols(int(drop.size), np.sort(drop + self.offset).astype(np.int32))
        self.V, self.gains, self.w_last = self.V[~mask], self.gains[~mask], self.w_last[~mask]


@dataclass
class Scaled:
    """phi in the units the loop works in, and the map back to the utility's own gain."""

    kind: str
    h: np.ndarray | None = None
    shift: float = 0.0
    factor: float = 1.0

    def phi(self, V: np.ndarray) -> np.ndarray:
        """phi of each posterior (rows), as `Bayes.phi` but with this target h."""
        V = np.atleast_2d(V)
        if self.kind == "bayes-mse":
            return (V @ self.h) ** 2
        if self.kind == "map":
            return V.max(axis=1)
        return SEPARABLE[self.kind](V).sum(axis=1)

    def gain(self, g: float) -> float:
        """The utility's gain (`Bayes.gain` units) from the loop's."""
        return self.factor * g + self.shift


def scaled_utility(problem) -> Scaled:
    util, P = problem.utility, problem.prior
    if util.kind != "bayes-mse":
        return Scaled(util.kind)
    h = util.target(problem)
    c0 = float(h @ P)
    sd = float(np.sqrt(P @ (h - c0) ** 2))
    if sd == 0.0:
        return Scaled(util.kind, np.zeros_like(h), shift=c0 * c0, factor=0.0)
    return Scaled(util.kind, (h - c0) / sd, shift=c0 * c0, factor=sd * sd)


def _objective(kind: str, value: float, P: np.ndarray) -> float:
    """|natural objective| (MSE, I(X;Y), accuracy) of a gain in the loop's units."""
    if kind in ("bayes-mse", "histogram-mse"):
        return abs(1.0 - value)               # MSE / Var for bayes-mse (scaled), 1 - sum post^2
    if kind == "mutual-information":
        return abs(float(entropy_rows(P)) + value)
    return abs(value)


def _natural_gap(kind: str, value: float, bound: float, P: np.ndarray) -> float:
    """Gap relative to the natural objective, in the loop's units."""
    return (bound - value) / max(_objective(kind, value, P), 1e-12)


def _reported(sc: Scaled, bound: float, d: int) -> float:
    """A bound in the loop's units as it will be reported: plus the round-off allowance that
    `reported_bound` adds in gain units. The loop stops on the gap to it, so that the gap the
    result reports meets GAP_TOL too (without it, mutual information, Zipf(1.1), d = 256,
    eps = 0.5 stopped at 1.0e-9 and reported 1.0016e-9)."""
    if not np.isfinite(bound) or sc.factor == 0.0:
        return bound
    g = sc.gain(bound)
    return bound + (reported_bound(g, d) - g) / sc.factor


def column_generation(problem, fam: Family, time_limit: float = 60.0, progress=None,
                      max_rounds: int = MAX_ROUNDS):
    """Certified posterior-space LP by column generation with structured pricing.

    Returns (V, w, gain, gain bound, info) in `Bayes.gain` units, like `posterior.enumerate_and_solve`.
    progress: an optional callable(rounds, relative gap) called after each round.
    """
    deadline = time.perf_counter() + time_limit
    P = problem.prior
    sc = scaled_utility(problem)
    start, refined, merged = None, False, np.inf
    failed = ""
    if sc.kind == "bayes-mse" and sc.h is not None and P.size > COARSE_MIN and np.ptp(sc.h) > 0:
        try:
            if isinstance(fam, LIPBox) and P.size * fam.band >= REFINED:
                start = _refined_start(P, fam, sc.h, deadline)
                refined = start is not None
            if start is None:
                start = _coarse_start(P, fam, sc.h, deadline)
        except SolverError as e:
            # a merged problem's master failed before its first optimum: the start is only a
            # shortcut, the loop goes on from the family's own columns
            start, refined, failed = None, False, str(e)
        if start is not None and time.perf_counter() > deadline:
            # out of time: the merged problem's channel, expanded, is a channel of this one (same
            # weights); one pricing at the expanded duals gives a valid bound (without them, the
            # trivial one: the loop would only have had time for the prior's own column)
            V, mu, w = start
            priced = fam.price(sc.kind, mu, sc.h) if mu is not None else None
            info = {"rounds": 0, "columns": len(V), "pricing_nodes": priced.nodes if priced else 0,
                    "pricing": fam.name + "-structured", "stopped": "time_limit"}
            bound = float(mu @ P + priced.upper) if priced else np.inf
            return PosteriorSolution(V, w, sc.gain(float(sc.phi(V) @ w)), sc.gain(bound), info)
        if refined and start is not None:   # its duals only bound a stopped run: as the smoothing's centre they slowed d = 512
            if start[1] is not None:
                merged = float(start[1] @ P + fam.price(sc.kind, start[1], sc.h).upper)
            start = (start[0], None, start[2])
    master, w, value, bound, info = _generate(P, fam, sc, deadline, progress, max_rounds, GAP_TOL, start,
                                              slack=refined)
    if merged < bound:       # (a run stopped within its first rounds, before any slack point)
        bound, info["bound"] = merged, "merged"
    if failed:
        info["start_failed"] = failed
    if sc.kind in SEPARABLE and info.get("stopped"):
        V, p = _within(*fam.design(sc.kind, np.random.default_rng(0)), problem.m, SEPARABLE[sc.kind])
        gain = float(p @ sc.phi(V))
        if len(p) and gain > value:                    # the closed-form design is the better channel
            info["channel"] = "design"
            return PosteriorSolution(V, p, sc.gain(gain), sc.gain(bound), info)
    return PosteriorSolution(master.V, w, sc.gain(value), sc.gain(bound), info)


def _within(V: np.ndarray, p: np.ndarray, m: int, f) -> tuple[np.ndarray, np.ndarray]:
    """A design's outputs (posteriors V in the cyclic order of its windows, probabilities p)
    merged down to at most m, greedily, only ever merging neighbours in that order: each step
    merges the neighbouring pair whose merge loses the least gain `g(a) + g(b) - g(a + b)`,
    `g = p phi(v)`, phi = sum_x f(v_x) (neighbouring windows differ by one symbol, so merging the
    pairs that differ by the lightest ones loses least). A merged posterior is a convex combination
    of admissible ones. O(n) candidates a step where the frontend's greedy merge weighs all O(n^2)
    pairs (at d = 1024, 2d outputs: 40 s). Where two posteriors differ on few coordinates (LIP's
    windows) the loss is summed over those alone, the only terms that do not cancel; LDP's differ
    everywhere (each window renormalizes) and keep the whole sum, with each output's g kept. d = 4000,
    2d outputs down to d, the same merges as with phi over every coordinate each time: LIP
    histogram-MSE / mutual information 0.49 / 1.04 s (were 1.89 / 2.43 s), LDP mutual information
    0.98 s (was 2.69 s). Rows are taken a block at a time (ADD_ENTRIES)."""
    n, d = len(p), V.shape[1]
    if n <= m:
        return V, p
    V, p = V.copy(), p.copy()
    step = max(1, ADD_ENTRIES // d)
    g = np.concatenate([p[i:i + step] * f(V[i:i + step]).sum(axis=1) for i in range(0, n, step)])
    nxt, prv = np.r_[1:n, 0], np.r_[n - 1, 0:n - 1]

    def loss(i: int, j: int) -> float:
        x = np.flatnonzero(V[i] != V[j])
        q = p[i] + p[j]
        if 2 * x.size > d:
            return float(g[i] + g[j] - q * f((p[i] * V[i] + p[j] * V[j]) / q).sum())
        a, b = V[i, x], V[j, x]
        return float(np.sum(p[i] * f(a) + p[j] * f(b) - q * f((p[i] * a + p[j] * b) / q)))

    L = np.array([loss(i, int(nxt[i])) for i in range(n)])
    alive, left = np.ones(n, dtype=bool), n
    while left > m:
        i = int(np.argmin(np.where(alive, L, np.inf)))
        j = int(nxt[i])
        q = p[i] + p[j]
        V[i] = (p[i] * V[i] + p[j] * V[j]) / q
        p[i], g[i] = q, q * f(V[i]).sum()
        alive[j], L[j], left = False, np.inf, left - 1
        nxt[i] = nxt[j]
        prv[nxt[i]] = i
        L[i] = loss(i, int(nxt[i]))
        L[prv[i]] = loss(int(prv[i]), i)
    return V[alive], p[alive]


def along(h: np.ndarray, k: int) -> np.ndarray:
    """The groups of k consecutive symbols in the (stable) order of h: group[x], 0..ceil(d / k) - 1."""
    group = np.empty(h.size, dtype=int)
    group[np.argsort(h, kind="stable")] = np.arange(h.size) // k
    return group


def _coarse_start(P, fam: Family, h, deadline):
    """Columns, duals and weights from the problem with symbols merged in pairs along h.

    A channel of the merged problem, applied to both symbols of a pair, is a channel of the
    problem with the same leakage (each symbol's lift is its pair's) and the same MSE for the
    merged target (the pair's mean of h): its posteriors, expanded, are admissible columns, and
    a dual of the merged master, copied to both symbols, is a dual point of the full one.
    """
    group = along(h, 2)
    Pc, _, master, w, _, _, _ = solve_merged(P, fam, h, group, deadline, COARSE_GAP)
    used = w > 0
    cols = P[None, :] * (master.V[used] / Pc[None, :])[:, group]
    return cols, master.mu_best[group] if master.mu_best is not None else None, w[used]


REFINED = 32.0
"""bayes-mse under LIP starts from `_refined_start` where its optimum's bands hold at least REFINED
symbols on average (d times `LIPBox.band`), and from `_coarse_start` elsewhere. Narrower bands
leave little to merge (d = 1024, eps = 4, 18 a band: the two problems took the whole 60 s, against
certified in 21 s), while wide ones gain (d = 256, eps = 0.5 / 1, 97 / 69 a band: 4.1 / 3.1 s
against 11.0 / 6.4 s). It was 64 until REFINED_MAX and MERGED_SHARE bounded what a refined start
can cost: at 32, d = 512, eps = 2 (about 61 a band) takes the refined start where its second
grouping is small enough, and of its three Zipf seeds two that ended 5.1e-4 / 5.4e-4 from the
bound at 60 s are certified in 49 / 31 s (the last at 1.4e-9), Dirichlet seed 0 in 28.5 s (was
42.3 s); d = 128 / 256 as before (under a second / 2-3 s), and at 16 d = 256, Dirichlet eps = 2 took
7.5 s against 2.2 s."""
REFINED_MAX = 360
"""`_refined_start` gives up (and `_coarse_start` starts the loop) where its second grouping keeps more
than this many groups: that merged problem then costs about as much as a full problem of its size,
and is seldom solved in time. d = 1024 (60 s): Dirichlet eps = 2, 481 groups (seeds 1 and 2) ended
4.2e-1 / 2.9e-2 from the bound, 4.9e-3 / 2.1e-3 from the pair-merged start; Zipf eps = 2 seed 1
(430 groups) 2.4e-1 against 1.1e-3; Zipf eps = 1 seed 2 (400 groups) 1.2e-3 against 2.2e-4. Below it,
the refined start is the better one even where it keeps most symbols (a share of d was the rule
before, 0.5): d = 512, Zipf eps = 1 seed 2 (321 groups, 63%) certified in 50 s, 3.7e-4 at 60 s from
the pair-merged start; d = 256, Dirichlet eps = 1 seeds 1 / 2 (60% / 56%) 3.0 / 5.6 s, against
5.7 / 9.9 s."""
MERGE, REACH = 4, 1
"""`_refined_start`: symbols merged by MERGE along h first; then the groups within REACH groups of a
place where a column in use changes are split back into their symbols."""


def _refined_start(P, fam: LIPBox, h, deadline):
    """(columns, duals, weights) of bayes-mse under LIP from two merged problems (bench_aggregate.py):
    symbols merged by MERGE along h, solved to COARSE_GAP; then every group within REACH groups of
    a place where a column in use changes along h (or is fractional) split back into its symbols,
    the runs of groups between them merged into one symbol each, solved from the first one's
    columns to GAP_TOL with slack points (SLACK_FLAT); None where that grouping keeps more than
    REFINED_MAX groups. Its channel, applied to each symbol of a group, is a channel of the full
    problem with the same leakage and MSE (at d = 256 its value is the optimum's to 3e-12); its
    master's best duals, given to every symbol of a group, are a dual point of the full one."""
    group = along(h, MERGE)
    Pg, _, master, w, _, _, _ = solve_merged(P, fam, h, group, deadline, COARSE_GAP)
    new, merged, _ = refine(P, fam, h, group, Pg, master.V[w > 1e-14])
    if new.max() + 1 > REFINED_MAX:
        return None
    Pc, _, master, w, _, _, _ = solve_merged(P, fam, h, new, deadline, GAP_TOL, (merged, None, None), slack=True)
    used = w > 1e-14
    mu = master.mu_best[new] if master.mu_best is not None else None    # a dual point, as `_coarse_start`'s
    return P[None, :] * (master.V[used] / Pc)[:, new], mu, w[used]


def refine(P, fam: LIPBox, h, group: np.ndarray, Pg: np.ndarray, V: np.ndarray):
    """The second grouping of `_refined_start`: from the groups along h (`group[x]`, masses Pg) and
    the posteriors V of the merged problem's columns in use, every group within REACH groups of a
    place where a column changes along h (or is fractional) split into its symbols, each run of
    the other groups merged into one. Returns (the new groups, V's columns on them, how many
    groups were split)."""
    order = np.argsort(h, kind="stable")
    U = V / Pg                                             # u = post / P on the groups (in h order)
    G = Pg.size
    change = np.flatnonzero((np.abs(np.diff(U, axis=1)) > 1e-9 * np.abs(U).max()).any(axis=0))
    split = ((U > fam.lo[0] * (1 + 1e-9)) & (U < np.exp(fam.eps) * (1 - 1e-9))).any(axis=0)
    for r in range(REACH + 1):
        split[np.clip(change - r, 0, G - 1)] = True
        split[np.clip(change + 1 + r, 0, G - 1)] = True
    # in h order: each symbol of a split group starts a new group, and so does the first symbol of
    # a run of unsplit groups; the rest join the group before them
    s_split = split[group[order]]
    starts = s_split | np.r_[True, np.diff(group[order]) != 0] & np.r_[True, s_split[:-1]]
    new = np.empty(P.size, dtype=int)
    new[order] = np.cumsum(starts) - 1
    cols = P[None, :] * U[:, group]                        # the columns, full d
    return new, np.stack([np.bincount(new, weights=c) for c in cols]), int(split.sum())


def solve_merged(P, fam: Family, h, group: np.ndarray, deadline: float, gap_tol: float, start=None,
                 slack: bool = False):
    """bayes-mse with the symbols of each group merged (`group[x]`: x's group, 0..G-1), by the
    column generation loop from `start`, or above COARSE_MIN groups from its own pair-merged start
    (`_coarse_start`). A channel of the merged problem, applied to every symbol of a group, is a
    channel of the full one with the same leakage and the same MSE for the merged target (the
    group's P-weighted mean of h). slack: the loop prices at `_slack_point`s too (a start that is
    nearly optimal). Returns (group masses, merged target, master, w, value, bound, info), in the
    loop's units."""
    Pc = np.bincount(group, weights=P)
    hc = np.bincount(group, weights=P * h) / Pc
    famc = type(fam)(Pc, fam.budget)
    now = time.perf_counter()
    deadline = min(deadline, now + MERGED_SHARE * (deadline - now))
    if start is None and Pc.size > COARSE_MIN:
        start = _coarse_start(Pc, famc, hc, deadline)
    master, w, value, bound, info = _generate(Pc, famc, Scaled("bayes-mse", hc), deadline, None, MAX_ROUNDS,
                                              gap_tol, start, slack)
    return Pc, hc, master, w, value, bound, info


def _generate(P, fam: Family, sc: Scaled, deadline: float, progress, max_rounds: int, gap_tol: float,
              start=None, slack: bool = False):
    """The column generation loop. Returns (master, w, value, bound, info) in the loop's units.
    slack: price at `_slack_point`s too (SLACK_FLAT), for a start that is (nearly) optimal."""
    master = Master(P, np.argsort(sc.h, kind="stable") if sc.kind == "bayes-mse" and sc.h is not None else None)
    cols = fam.initial(sc.h)
    chord = fam.chord_bound(sc.kind) if sc.kind in SEPARABLE else np.inf
    face = fam.face_loss(sc.kind) if np.isfinite(chord) else 0.0
    chord -= face                                       # what no channel can recover of it
    if face > 0.0:                                      # and the rare vertices that lose least there
        cols = np.vstack([cols, fam.face_vertices(sc.kind)])
    shape, mu_shape = np.inf, None
    low_left = LOW_LOSS_COLUMNS[fam.name] * P.size if np.isfinite(chord) else 0
    low_rng = np.random.default_rng(0)                 # reproducible columns, so reproducible results
    near_rng, near_misses, tied = np.random.default_rng(1), 0, 0
    low_gap = np.inf
    if start is not None:
        cols = np.vstack([cols, start[0]])          # (columns, duals, weights) of the merged problem
    master.add(cols, sc.phi(cols))
    master.w_last[0] = 1.0       # the prior's own column: the channel that releases nothing, feasible
    if start is not None and start[2] is not None and len(start[2]):
        # the start's channel is feasible too, and the first round's fallback where it is better
        # (d = 1024, a 2 s limit: the merged problems took their share, the first master LP ran
        # out of time, and the channel returned released nothing)
        w0 = np.r_[np.zeros(len(cols) - len(start[2])), start[2]]
        if master.gains @ w0 > master.gains[0]:
            master.w_last = w0
    nodes, stopped = 0, ""
    rounds, flat, crawl = 0, 0, 0
    value, bound = -np.inf, np.inf
    w = np.zeros(len(cols))
    mu_best, alpha = None, SMOOTHING
    node_budget, node_cap = MAX_NODES, max(MAX_NODES, int(NODE_MEMORY / (16 * P.size + 240)))
    ascents, run, last = 0, 0, np.zeros((0, P.size))
    cuts: deque[int] = deque(maxlen=LEVEL_HELD)      # columns added by the last rounds' level points
    if sc.kind in SEPARABLE and not np.isfinite(chord):
        # a bound without branching (LDP histogram-MSE): what the loop reports if its pricing's
        # bounds stay above it (d = 1024, Dirichlet, eps = 1, 60 s: gap 5.3e-6, before 0.11). Kept
        # apart from them: their best dual point is the smoothing's centre (the shape bound's, as
        # the centre, changed nothing at d = 1024 and slowed d = 64 / 256)
        now = time.perf_counter()
        shape, mu_shape = fam.shape_bound(sc.kind, now + SHAPE_SHARE * max(deadline - now, 0.0))
    fixed = min(chord, shape)                           # the bounds tied to no dual point of the loop
    levels = LEVEL.get((fam.name, sc.kind))
    slack = slack and SLACK_FLAT is not None and sc.kind == "bayes-mse"
    slack_cuts, slack_failed, excessive, last_excess = np.zeros((0, P.size)), -np.inf, 0, np.inf

    def closed_fallback(w: np.ndarray, value: float) -> tuple[np.ndarray, float]:
        """(w, value), or the best of the family's closed-form channels (`Family.simple_channels`:
        GRR, and RR-LIP where it is feasible; its columns added) where it is better: a loop stopped
        before its first optimum returns at least those (d = 2000, LDP histogram-MSE, a 3 s limit:
        the first master LP ran out of time and the constant channel was returned; d = 9, LIP
        bayes-mse, a 1e-4 s limit: GRR where RR-LIP, feasible, has a sixth of its MSE)."""
        for _, V_c, lam in fam.simple_channels():
            phi_c = sc.phi(V_c)
            g_c = float(lam @ phi_c)
            if g_c > value:
                master.add(V_c, phi_c)
                w, value = np.r_[np.zeros(len(master.V) - len(lam)), lam], g_c
        return w, value

    def reported_gap(value: float, b: float) -> float:
        """The natural gap of value to the bound b as it will be reported (`_reported`)."""
        return _natural_gap(sc.kind, value, _reported(sc, b, P.size), P)

    def polished(w: np.ndarray, b: float) -> tuple[np.ndarray, float, float]:
        """(weights, value, gap to b) of the channel the polished weights make (`Master.polish`):
        taken where the gap of HiGHS's own weights passes, and tested again."""
        w = master.polish(w)
        value = float(master.gains @ w)
        return w, value, reported_gap(value, b)
    def near_columns(mu: np.ndarray, value: float, tol: float) -> np.ndarray:
        """`Family.near_ties` at the master's duals mu (finer once the master is within NEAR_CLOSE
        gap targets of the chord bound), the columns whose reduced cost passes tol."""
        near = fam.near_ties(sc.kind, mu, near_rng, fine=_natural_gap(sc.kind, value, chord, P) <= NEAR_CLOSE * gap_tol)
        return near[sc.phi(near) - near @ mu > tol]
    lam = levels[1] if levels is not None else 0.0     # the level's place between value and bound
    if start is not None and start[1] is not None:
        priced = fam.price(sc.kind, start[1], sc.h, deadline=deadline)
        nodes += priced.nodes
        bound, mu_best = float(start[1] @ P + priced.upper), start[1]
        master.add(priced.columns, sc.phi(priced.columns))
    while True:
        rounds += 1
        # the deadline stops the master LP too: the primal simplex's iterate is feasible, and the
        # last optimum stands where it is better (in the first round, the start's channel, or else
        # the prior's column alone, which releases nothing); stopped before any pricing, the bound
        # is the trivial one the frontend reports (d = 4000, LIP mutual information, 10 s limit:
        # the first master LP alone had run 68 s)
        try:
            w, mu = master.solve(deadline)
        except SolverError:
            # the last optimum (in the first round, the start's channel, or a closed form's where
            # better than the prior's own column) is still a channel and every bound priced so far
            # (the start's duals) holds: stop there
            w, stopped = master.w_last.copy(), "master_failed"
            value = float(master.gains @ w)
            if rounds == 1:
                w, value = closed_fallback(w, value)
                if not w[1:].any():
                    raise                               # nothing but the prior's own column
            break
        before, value = value, float(master.gains @ w)
        if rounds == 1 and mu is not None:         # HiGHS's costs on the objective's own scale from now on
            master.rescale(float(np.clip(1.0 / max(_objective(sc.kind, value, P), 1e-300), 1.0, MAX_COST_SCALE)))
        flat = flat + 1 if value <= before + 1e-12 * max(1.0, abs(value)) else 0
        # the level method's trigger also counts rounds that close under 1e-3 of the open gap: a
        # master crawling up by 1e-12 a round on columns from the ascent never stalls by the test
        # above (LDP histogram-MSE, d = 64: 1,600 such rounds to the time limit)
        open_gap = min(bound, fixed) - value
        crawl = crawl + 1 if flat or (np.isfinite(open_gap) and value - before <= 1e-3 * open_gap) else 0
        if mu is None:                                 # the master LP itself ran out of time
            fallback = float(master.gains @ master.w_last)
            if fallback > value:                       # (its iterate is feasible, not always better)
                w, value = master.w_last.copy(), fallback
            if rounds == 1:
                w, value = closed_fallback(w, value)
            stopped = "time_limit"
            break
        # price only as exactly as this round needs: to a quarter of the gap target, and stop at
        # a column worth half of the open bound (the bound returned is valid either way)
        # (never below the round-off the master's own columns show: `posterior.noise`)
        tol = max(0.25 * gap_tol * max(_objective(sc.kind, value, P), 1e-12), noise(master.V, master.gains, mu))
        if reported_gap(value, chord) <= gap_tol:
            w, value, closed = polished(w, chord)
            if closed <= gap_tol:
                break                                  # certified by the closed-form chord bound
        new = np.zeros((0, P.size))
        at, leveled = mu, False                        # the dual point priced (unused columns are pruned by it)
        active = np.zeros(0, dtype=np.intp)            # the model's cuts active at a level point
        level = levels is not None and (mu_best is not None or mu_shape is not None) and crawl >= levels[0]
        if low_left > 0 and chord - value < LOW_LOSS_PROGRESS * low_gap:   # approach the chord bound while batches help
            new = fam.low_loss(sc.kind, mu, min(low_left, LOW_LOSS_BATCH * P.size), low_rng, deadline,
                               LOW_LOSS_DEPTH[0] if fam.last_loss <= tol else LOW_LOSS_DEPTH[1])
            low_left, low_gap = low_left - LOW_LOSS_BATCH * P.size, chord - value
            if progress is not None:
                progress(rounds, reported_gap(value, min(bound, fixed)))
        elif run < ASCENT_RUN and not level:           # (not at a stalled master's duals)
            new = _ascent_columns(fam, sc, mu, np.vstack([master.V[w > 0], last]), tol, deadline)
            ascents, run = (ascents + 1, run + 1) if len(new) else (ascents, run)
        if not len(new):
            run = 0
            if level and levels is not None:
                # the level method: price exactly at the projection of the best dual point (the
                # shape bound's while it is the best) on the master's model at a level between its
                # value and the bound (_level_point)
                if shape < bound:
                    bound, mu_best = shape, mu_shape
                assert mu_best is not None                  # (the shape bound's, or a priced one)
                now = time.perf_counter()
                at, active = _level_point(master, mu_best, value + lam * (bound - value), mu,
                                          now + LEVEL_QP_SHARE * max(deadline - now, 0.0))
                leveled = True
                priced = fam.price(sc.kind, at, sc.h, deadline=deadline, tol=tol, max_nodes=node_budget)
                nodes += priced.nodes
                if float(at @ P + priced.upper) < bound:
                    bound, mu_best = float(at @ P + priced.upper), at
            else:
                # Wentges smoothing: price at a point between the master's duals and the best dual
                # point found so far (the one with the lowest bound); any mu gives a valid bound. A
                # stalled master (STALL) is priced at more such points, all columns kept.
                stall = STALL.get(fam.name)
                more = stall[1] if stall is not None and sc.kind == "bayes-mse" and mu_best is not None \
                    and flat >= stall[0] else ()
                pricings = []
                if tied >= TIED_SKIP and sc.kind in SEPARABLE and (tied - TIED_SKIP) % TIED_EVERY:
                    # on the plateau (TIED_SKIP): the meet in the middle alone, no bound from it
                    near = near_columns(mu, value, tol)
                    tied = tied + 1 if len(near) else 0
                    if len(near):
                        pricings.append(Priced(-np.inf, np.inf, near))
                for a in (alpha, *more) if not pricings else ():
                    mu_sep = mu if mu_best is None else a * mu_best + (1.0 - a) * mu
                    one = fam.price(sc.kind, mu_sep, sc.h, deadline=deadline, tol=tol, ratio=PRICING_RATIO,
                                    max_nodes=node_budget)
                    nodes += one.nodes
                    b_sep = float(mu_sep @ P + one.upper)
                    if b_sep < bound:
                        bound, mu_best = b_sep, mu_sep
                    pricings.append(one)
                if slack and isinstance(fam, LIPBox) and sc.h is not None and flat >= (SLACK_FLAT or 0) \
                        and value > slack_failed:
                    # complementary slackness with the columns in use, centred (`_slack_point`)
                    in_use = w > 1e-14
                    found = _slack_point(fam, sc.h, master.V[in_use], w[in_use], slack_cuts, deadline)
                    if found is None:
                        slack_failed = value                    # not the optimal face: wait for the value to rise
                    else:
                        at_slack, excess = found
                        one = fam.price(sc.kind, at_slack, sc.h, deadline=deadline, tol=tol)
                        nodes += one.nodes
                        b_slack = float(at_slack @ P + one.upper)
                        if b_slack < bound:
                            bound, mu_best = b_slack, at_slack
                        slack_cuts = np.vstack([slack_cuts, one.columns])[-SLACK_CUTS:]
                        pricings.append(one)
                        grown = excess > min(bound, fixed) - value and excess > SLACK_GROWTH * last_excess
                        excessive, last_excess = (excessive + 1 if grown else 0), excess   # (NaN: compares false)
                        if excessive >= SLACK_EXCESS:   # the columns in use are not optimal (SLACK_EXCESS)
                            slack_failed, excessive, last_excess = value, 0, np.inf
                priced = pricings[0]
                if len(pricings) > 1:
                    priced = dataclasses.replace(priced, columns=np.unique(np.vstack([x.columns for x in pricings]), axis=0))
            rel = reported_gap(value, min(bound, fixed))
            if progress is not None:
                progress(rounds, rel)
            if rel <= gap_tol:
                w, value, rel = polished(w, min(bound, fixed))
            if rel <= gap_tol or min(bound, fixed) - value <= 1e-13:
                break
            new = priced.columns
            if len(new):       # (at a level point: the columns that cut the model there)
                new = new[sc.phi(new) - new @ at > (1e-12 * max(1.0, abs(value)) if leveled else tol)]
            if leveled and levels is not None:
                # a level point with no cut: the model is exact there, go next to its minimum
                lam = levels[1] if len(new) else LEVEL_LOW
            if not len(new) and not leveled and priced.stopped == "max_nodes" and sc.kind in SEPARABLE \
                    and near_misses < NEAR_MISSES:
                # the search gave up without a column: the plateau of tied coordinates, searched by
                # meet in the middle before a deeper search (until it too finds nothing, twice)
                new = near_columns(mu, value, tol)
                near_misses = 0 if len(new) else near_misses + 1
                tied = tied + 1 if len(new) else 0
            if not len(new):
                if not level and levels is not None and priced.stopped == "max_nodes" and mu_best is not None:
                    # no column found near the master's duals, and no proof either (a degenerate
                    # master: many columns at a reduced cost of about 0): the level method instead
                    crawl = levels[0]
                    continue
                if level and priced.stopped == "max_nodes" and time.perf_counter() < deadline \
                        and node_budget >= node_cap:
                    levels, node_budget = None, MAX_NODES   # exact pricing out of reach: smoothing only
                    continue
                if not level and alpha > 0 and mu_best is not None:   # mis-pricing: price at the master's duals
                    alpha = 0.0 if alpha < 0.1 else alpha / 2
                    continue
                if priced.stopped == "max_nodes" and time.perf_counter() < deadline and node_budget < node_cap:
                    node_budget = min(4 * node_budget, node_cap)   # the pricing gave up, not converged: search deeper
                    continue
                if not level or priced.stopped:             # (at a level point: the bound fell, go on)
                    stopped = priced.stopped or "pricing found no improving column"
                    break
            elif not level:
                alpha = min(SMOOTHING, alpha * 1.5) if alpha > 0 else 0.0
        if time.perf_counter() > deadline:
            stopped = "time_limit"
            break
        if rounds >= max_rounds:
            stopped = "max_rounds"
            break
        last = new
        master.add(new, sc.phi(new))
        cuts.append(len(new) if leveled else 0)
        prune_at, keep = PRUNE[fam.name]
        if len(master.V) > max(prune_at * P.size, PRUNE_FLOOR[0]):
            # the cuts of the last level points are kept (the model's shape there): pruned, the
            # next projections would repeat them
            held = np.r_[w, np.zeros(len(new))]
            held[len(held) - sum(cuts):] = 1.0
            held[active] = 1.0
            master.prune(at, held, max(keep * P.size, PRUNE_FLOOR[1]))
    master.mu_best = mu_best
    info = {"rounds": rounds, "ascent_rounds": ascents, "columns": len(master.V), "pricing_nodes": nodes, "pricing": fam.name + "-structured"}
    if chord < bound:
        bound = chord
        info["bound"] = "chord" if face == 0.0 else "chord-face"
        if face > 0.0:
            info["face_loss"] = face
    elif shape < bound:
        bound = shape
        info["bound"] = "shape"
    if stopped:
        info["stopped"] = stopped
    return master, w, value, bound, info


def _slack_point(fam: LIPBox, h: np.ndarray, V: np.ndarray, w: np.ndarray, cuts: np.ndarray,
                 deadline: float) -> tuple[np.ndarray, float] | None:
    """(a dual point for bayes-mse under LIP near the face that the columns in use V (rows,
    posteriors; weights w) say is optimal, the program's excess `w . s`), or None where its
    program fails. Where the interior point method stops short of optimality (status unknown,
    time or iteration limit) its iterate is the point and the excess NaN: at d = 1024 (Zipf eps = 2,
    73 columns, 75k rows) IPX ended unknown after 48 iterations at a point that prices 6.1e-3 above
    the value, where the loop, given None, had waited for a rise of the value that never came and
    ended with no bound better than the trivial one.

    If V's channel is optimal, every optimal dual mu makes each v in V a maximizer of
    `phi(v) - mu . v` over K, so of its linearization at theta = h . v (phi >= 2 theta h . v -
    theta^2, equal at v): v maximizes `(2 theta h - mu) . u` over LIP's box-and-hyperplane, a
    fractional knapsack, whose optimality is a threshold nu_v with `mu_x + nu_v <= 2 theta h_x`
    where v is at its upper bound and `>=` where at its lower one; and `mu . v = phi(v)`. Those
    rows, each threshold row loosened by a slack s_v >= 0 that costs w_v (a channel that is
    optimal only to round-off, or not yet, has no exact point), and `mu . c >= phi(c)` for the
    columns `cuts`, make a small sparse LP, `min mu . P + w . s`, whose optimal face holds every
    optimal dual of the full problem when V's channel is optimal. Its interior point solution
    without crossover is near the centre of that face, where the unpriced vertices are least
    likely to cut it; a vertex of it, as the simplex gives, cuts deep (bayes-mse, d = 256, eps = 1,
    from the certified channel: priced exactly and its columns added as cuts, 100 rounds of simplex
    points kept the bound 2e-2..8e-2 above, interior points certified in 17 rounds, 1 s). Whatever
    mu this returns, exact pricing at it gives a valid bound: the rows only choose where to look.
    The excess is 0 (to round-off) when V's channel is optimal, since an optimal dual meets every
    row with s = 0; a positive one says that no dual point makes all of V optimal together, so V's
    channel is not optimal (SLACK_EXCESS).
    """
    import highspy

    P = fam.P
    d, K = P.size, len(V)
    U = V / P
    theta = V @ h
    k1, x1 = np.nonzero(U >= fam.hi * (1.0 - 1e-9))
    k2, x2 = np.nonzero(U <= fam.lo * (1.0 + 1e-9))
    n1, n2 = k1.size, k2.size
    r = np.arange(n1 + n2)
    # columns: mu (d), nu (K), s (K); rows: the thresholds, then phi(v) <= mu . v for V and cuts
    thresholds = sparse.coo_matrix((np.r_[np.ones(2 * (n1 + n2)), -np.ones(n1), np.ones(n2)],
                                    (np.r_[r, r, r], np.r_[x1, x2, d + k1, d + k2, d + K + k1, d + K + k2])),
                                   shape=(n1 + n2, d + 2 * K))
    C = np.vstack([V, cuts])
    A = sparse.vstack([thresholds, sparse.hstack([sparse.csr_matrix(C), sparse.csr_matrix((len(C), 2 * K))])]).tocsc()
    phi = (C @ h) ** 2
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = d + 2 * K, A.shape[0]
    lp.col_cost_ = np.r_[P, np.zeros(K), w]
    lp.col_lower_ = np.r_[np.full(d + K, -inf), np.zeros(K)]
    lp.col_upper_ = np.full(d + 2 * K, inf)
    lp.row_lower_ = np.r_[np.full(n1, -inf), 2.0 * theta[k2] * h[x2], phi]
    lp.row_upper_ = np.r_[2.0 * theta[k1] * h[x1], np.full(n2, inf), phi[:K], np.full(len(C) - K, inf)]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    hs = quiet_highs()
    for key, value in (("solver", "ipm"), ("run_crossover", "off"), ("ipm_optimality_tolerance", 1e-10),
                       ("time_limit", float(max(deadline - time.perf_counter(), 1e-3)))):
        hs.setOptionValue(key, value)
    hs.passModel(lp)
    hs.run()
    status, kind = hs.getModelStatus(), highspy.HighsModelStatus
    x = np.asarray(hs.getSolution().col_value)
    if status == kind.kOptimal:
        return x[:d], float(w @ np.maximum(x[d + K:], 0.0))
    if status in (kind.kUnknown, kind.kTimeLimit, kind.kIterationLimit) and x.size == d + 2 * K \
            and np.all(np.isfinite(x)):
        return x[:d], np.nan           # an interior iterate short of optimality: a point, no excess
    return None


def _ascent_columns(fam: Family, sc: Scaled, mu: np.ndarray, seeds: np.ndarray, tol: float,
                    deadline: float = np.inf) -> np.ndarray:
    """Columns with a reduced cost above tol found by `Family.ascend` from the master's basis and
    the last round's columns (utilities in ASCENT; otherwise none). A round that finds some skips
    the branch and bound pricing: it adds columns but no bound."""
    if sc.kind not in ASCENT:
        return np.zeros((0, len(mu)))
    cand = fam.ascend(sc.kind, mu, seeds, deadline=deadline)
    cand = cand[sc.phi(cand) - cand @ mu > tol]
    return cand[np.sort(np.unique(np.round(cand, 13), axis=0, return_index=True)[1])]


NNLS_MAX_ENTRIES, NNLS_S_PER_ENTRY = 1 << 24, 5e-7
"""`_least_distance` builds a dense (d + 1) x rows matrix and cannot be stopped: `_projection`
uses it up to this many entries (128 MB), and where its time, about NNLS_S_PER_ENTRY a matrix
entry (LDP histogram-MSE level points: 0.2M entries at d = 256 in 0.01-0.04 s, 2.1M at d = 1024 in
0.8-1.1 s, 8.6M at d = 2048 in 3.1-3.4 s), fits before the deadline; `_projection_qp` (which stops
at it) otherwise."""


def _projection(G: np.ndarray, h: np.ndarray, center: np.ndarray, deadline: float):
    """argmin |x - center|^2 s.t. G x <= h, and each row's multiplier: `_least_distance` where it is
    small enough (NNLS_MAX_ENTRIES) and fits before the deadline, `_projection_qp` where it does not
    or gives no point; (None, None) if neither does."""
    entries = G.shape[0] * (G.shape[1] + 1)
    if entries <= NNLS_MAX_ENTRIES and time.perf_counter() + NNLS_S_PER_ENTRY * entries <= deadline:
        x, z = _least_distance(G, h, center)
        if x is not None:
            return x, z
    return _projection_qp(G, h, center, deadline)


def _least_distance(G: np.ndarray, h: np.ndarray, center: np.ndarray):
    """argmin |x - center|^2 s.t. G x <= h and each row's multiplier, by least distance
    programming through nonnegative least squares (Lawson and Hanson, "Solving Least Squares
    Problems", 1974, Ch. 23, Alg. LDP): with y = x - center the problem is min |y|^2 s.t.
    E y >= f, E = -G, f = G center - h. For u >= 0 minimizing |A u - e| with A = [E^T; f^T]
    and e = (0, ..., 0, 1), the residual r = A u - e gives y = -r[:n] / r[n] and the rows'
    multipliers u / -r[n] (r[n] = 0: no feasible point). An active-set method, exact to round-off:
    on the 17 level points of an LDP histogram-MSE solve at d = 256 (566-975 rows) 9-36 ms each,
    against 0.07-2.3 s for `_projection_qp` (14.3 s in all), and nearer the centre (Clarabel's point
    lies inside by its tolerance). (None, None) where scipy's NNLS stops at its iteration limit or
    its point misses a row by more than 1e-9 of h (its earlier versions, 1.12-1.15, were less
    robust): `_projection_qp` then."""
    from scipy.optimize import nnls            # (scipy.optimize is not loaded with the package)

    f = G @ center - h
    if f.max(initial=-np.inf) <= 0.0:
        return center.copy(), np.zeros(h.size)
    s = max(1.0, float(np.abs(f).max()))              # (f / s: the same point, scaled by s)
    A = np.vstack([-G.T, f[None, :] / s])
    e = np.zeros(A.shape[0])
    e[-1] = 1.0
    try:
        u, _ = nnls(A, e)
    except RuntimeError:                               # (its iteration limit)
        return None, None
    r = A @ u - e
    if not -r[-1] > 1e-12:
        return None, None
    x = center - s * r[:-1] / r[-1]
    tol = 1e-9 * max(1.0, float(np.max(np.abs(h))))
    if not (np.all(np.isfinite(x)) and np.max(G @ x - h) <= tol):
        return None, None
    return x, s * u / -r[-1]


def _projection_qp(G: np.ndarray, h: np.ndarray, center: np.ndarray, deadline: float):
    """argmin |x - center|^2 s.t. G x <= h (Clarabel), and each row's multiplier (0 off the
    working set); (None, None) if Clarabel returns no point.

    Rows enter a working set n / 4 at a time, first those most violated at `center`, then those
    the last point violates most, until none is violated: on 17 recorded QPs at d = 256 (550-990
    rows) 0.01-1.1 s each, 3.2 s in all, against 5.5 s adding 2 n rows at a time and 0.7-1.9 s
    each on every row. The deadline given is `_generate`'s share for one level point. (HiGHS's
    active-set QP, 0.1-0.2 s on some of these, ran 129 s on one and ended infeasible by 5e-3 on
    two.)"""
    n = center.size
    size = max(n // 4, 16)                             # rows added at a time
    viol = G @ center - h
    work = np.argsort(-viol, kind="stable")[:size]
    work = work[viol[work] > 0] if viol[work[0]] > 0 else work[:1]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    # a level set can be as thin as 1e-9 of the gain: at the default 1e-8 the point misses it by
    # more than its width (and `_level_point` has to pull it back most of the way to `inside`)
    settings.tol_feas = settings.tol_gap_abs = settings.tol_gap_rel = 1e-11
    settings.max_iter = 100
    tol = 1e-9 * max(1.0, float(np.max(np.abs(h))))
    while True:
        left = deadline - time.perf_counter()
        if np.isfinite(left):
            settings.time_limit = float(max(left, 1e-3))
        sol = clarabel.DefaultSolver(sparse.identity(n, format="csc"), -center, sparse.csc_matrix(G[work]),
                                     h[work], [clarabel.NonnegativeConeT(work.size)], settings).solve()
        x = np.asarray(sol.x)
        if x.shape != center.shape or not np.all(np.isfinite(x)):
            return None, None
        viol = G @ x - h
        more = np.setdiff1d(np.flatnonzero(viol > tol), work)
        if not more.size or time.perf_counter() > deadline:
            z = np.zeros(h.size)
            z[work] = np.abs(np.asarray(sol.z))
            return x, z
        work = np.union1d(work, more[np.argsort(-viol[more], kind="stable")][:size])


def _level_point(master: Master, center: np.ndarray, level: float, inside: np.ndarray,
                 deadline: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """The level method's next dual point: the projection of `center` on the set where the
    master's model of the dual function, `mu . P + max_i (gain_i - mu . v_i)` over its columns,
    is at most `level` (a QP, `_projection`); and the columns whose cuts are active
    there (a nonzero multiplier). Those must outlive pruning: the projection is the same on the
    active cuts alone, and a model that loses one moves the next points back to where they were.

    `inside` is a point where the model is at most `level` (the master's duals: there it equals
    the master's value). The QP's point is moved towards it just enough to meet the level exactly
    (the model is convex): at its tolerance the QP's point can miss a level set as thin as the
    master's optimal dual face by more than the gap asked."""
    P, V, gains = master.P, master.V, master.gains
    G = P[None, :] - V                                 # row i: (P - v_i) . mu <= level - gain_i
    x, z = _projection(G, level - gains, center, deadline)
    if x is None:
        x, z = inside, np.zeros(G.shape[0])
    active = np.flatnonzero(z > 1e-6 * float(np.max(z, initial=0.0)))

    def top(mu):                                       # the model is mu . P + top(mu)
        return float(np.max(gains - V @ mu))

    over, below = x @ P + top(x) - level, level - inside @ P - top(inside)
    if over > 0 and below > 0:                         # convex: the chord to `inside` stays below
        x = x + over / (over + below) * (inside - x)
    # the dual function is unchanged by mu + delta 1 (every v sums to 1): shift so that the
    # master's best column has reduced cost 0, and a column cuts the model iff its own is > 0
    return x + top(x), active
