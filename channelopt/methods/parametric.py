"""Budget sweeps on one HiGHS model whose matrix does not depend on eps.

Under one `ldp` notion, or one `lip` notion with G = X, and an expected distortion, the LP of
`lp.build` writes each entry as q[x, y] = s[x, y] + l[y] with the per-output floor l (LDP: the
column minimum; LIP: e^-eps Pr(Y = y)). Measuring the floor in units of its own slack,
t[y] = g l[y], makes the ratio rows free of eps:

- LDP (g = e^eps - 1): s[x, y] <= t[y]; each row of q sums to 1 as sum_y s[x, y] + L = 1 with the
  total floor L = sum_y l[y], that is sum_y t[y] - g L = 0.
- LIP (g = e^2eps - 1): s[x, y] <= t[y] and, since (e^eps - 1) l[y] = sum_x P_x s[x, y],
  sum_x P_x s[x, y] - t[y] / (e^eps + 1) = 0; the rows of q and L as for LDP.

The cost of t[y] is sum_x P_x D[x, y] / g. A new budget therefore changes one coefficient (LDP),
or m + 1 (LIP), m costs and m bounds of the model HiGHS holds, and its simplex continues from
where the last point ended, with no program rebuilt or passed again (`lp.load_program`). Every
point is then finished like any LP (`frontend.finish`): its channel audited and its dual bound
computed by channelopt on this program, which is the problem's LP written in other variables.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..notions.ldp import LDP
from ..notions.lip import LIP
from ..utility import Distortion
from .lp import WARM_PRICING, Program, RawSolution, cost_scale, load_program, new_highs

MAX_TOP = 3e3
"""Largest upper bound on t (`Parametric.top`) a point takes here (eps up to 8.0 nats, LDP and
LIP); larger budgets are built afresh (`lp.build`). The dual bound meets t's box through its
reduced cost, whose error (HiGHS's dual tolerance, round-off) the box's width multiplies. Against
the LP written pair by pair (60 random problems a notion, d and m 3..11, eps in random order),
the bound's largest shortfall (relative): LDP 5.7e-13 / 5.7e-11 / 2.8e-8 at eps = 6 / 8 / 9.9,
and at eps = 12 one of 2.8e-7 (past `frontend.OPTIMAL_GAP`); LIP 7e-12 / 2e-11 at eps = 6 / 9.9,
and 1.3e-6 at eps = 12 with the box e^2eps - 1 it had before `top`."""


class Parametric:
    """One problem's LP in eps-free form, held in a HiGHS instance across budgets.

    Parameters
    ----------
    problem : Problem
        A problem `Parametric.applies` to.
    """

    def __init__(self, problem):
        self.prior = problem.prior
        self.utility = problem.utility
        self.lip = isinstance(problem.privacy[0], LIP)
        d, m = problem.d, problem.m
        self.d, self.m = d, m
        nq = d * m
        cost = problem.utility.costs(problem)[0]
        self.cost = cost
        self.column_cost = cost.reshape(d, m).sum(axis=0)            # sum_x P_x D[x, y]
        n = nq + m + 1
        entry = np.arange(nq)
        t_of = nq + np.tile(np.arange(m), d)
        A_ub = sp.csr_matrix((np.r_[np.ones(nq), -np.ones(nq)], (np.r_[entry, entry], np.r_[entry, t_of])), shape=(nq, n))
        rows_q = sp.csr_matrix((np.ones(nq + d), (np.r_[np.repeat(np.arange(d), m), np.arange(d)],
                                                   np.r_[entry, np.full(d, n - 1)])), shape=(d, n))
        total = sp.csr_matrix((np.r_[np.ones(m), -1.0], (np.zeros(m + 1, dtype=int), np.r_[nq + np.arange(m), n - 1])),
                              shape=(1, n))
        blocks = [rows_q]
        if self.lip:
            floors = sp.csr_matrix((np.r_[np.repeat(problem.prior, m), -np.ones(m)],
                                    (np.r_[np.tile(np.arange(m), d), np.arange(m)], np.r_[entry, nq + np.arange(m)])),
                                   shape=(m, n))
            blocks.append(floors)
        blocks.append(total)
        A_eq = sp.vstack(blocks, format="csr")
        A_eq.sort_indices()
        # where the eps-dependent coefficients sit in A_eq.data: the total's -g, LIP's -1 / (e^eps + 1)
        self._total = A_eq.indptr[-1] - 1
        self._floors = A_eq.indptr[d + 1:d + m + 1] - 1 if self.lip else None
        b_eq = np.r_[np.ones(d), np.zeros(m if self.lip else 0), 0.0]
        self._t = nq + np.arange(m)
        lift = sp.csr_matrix((np.column_stack([np.ones(nq), np.ones(nq)]).ravel(),
                              np.column_stack([entry, t_of]).ravel(), np.arange(0, 2 * nq + 1, 2)), shape=(nq, n))
        self._lift_t = np.arange(1, 2 * nq, 2)                          # lift.data entries of t
        self.program = Program(d, m, np.r_[cost, np.zeros(m + 1)], A_ub, np.zeros(nq), A_eq, b_eq,
                               np.zeros(n), np.ones(n), [], lift)
        self.highs = None

    @staticmethod
    def applies(problem) -> bool:
        """One `ldp` notion, or one `lip` notion with G = X, and an expected distortion under
        the problem's own prior (one cost row)."""
        if len(problem.privacy) != 1 or type(problem.privacy[0]) not in (LDP, LIP):
            return False
        if isinstance(problem.privacy[0], LIP) and problem.latent is not None:
            return False
        u = problem.utility
        return type(u) is Distortion and u.cost_priors(problem).shape[0] == 1

    def takes(self, problem) -> bool:
        """Whether `problem` is this model's at another budget (same notion, prior and costs) that
        it takes (`top` within MAX_TOP)."""
        return (Parametric.applies(problem) and isinstance(problem.privacy[0], LIP) == self.lip
                and problem.d == self.d and problem.m == self.m
                and (problem.prior is self.prior or np.array_equal(problem.prior, self.prior))
                and (problem.utility is self.utility or np.array_equal(problem.utility.costs(problem)[0], self.cost))
                and self.top(problem.privacy[0].epsilon) <= MAX_TOP)

    def slack(self, eps: float) -> float:
        """g: e^eps - 1 (LDP) or e^2eps - 1 (LIP)."""
        return float(np.expm1(2 * eps if self.lip else eps))

    def top(self, eps: float) -> float:
        """An upper bound on t = g l: g (LDP: l <= 1), 2 sinh eps (LIP: l = e^-eps Pr(Y = y) <= e^-eps)."""
        return float(2 * np.sinh(eps)) if self.lip else self.slack(eps)

    def set_budget(self, eps: float) -> Program:
        """The program at budget eps (this model's arrays, updated in place)."""
        g = self.slack(eps)
        prog = self.program
        prog.A_eq.data[self._total] = -g
        if self.lip:
            prog.A_eq.data[self._floors] = -1.0 / (np.exp(eps) + 1.0)
        prog.c[self._t] = self.column_cost / g
        prog.ub[self._t] = self.top(eps)
        prog.lift.data[self._lift_t] = 1.0 / g
        return prog

    def solve(self, eps: float) -> tuple[Program, RawSolution]:
        """The LP at budget eps, solved from the last point's basis (from scratch the first time).

        Returns
        -------
        (Program, RawSolution)
            The program in this model's variables (for `frontend.finish`) and HiGHS's answer.
        """
        import highspy

        prog = self.set_budget(eps)
        n, k = prog.n, prog.b_ub.size
        h = self.highs
        if h is None:
            h = self.highs = new_highs()
            load_program(h, prog.c, prog.A_ub, prog.b_ub, prog.A_eq, prog.b_eq, prog.lb, prog.ub)
            h.setOptionValue("presolve", "off")
        else:
            h.changeCoeff(k + prog.A_eq.shape[0] - 1, n - 1, float(prog.A_eq.data[self._total]))
            if self.lip:
                for out in range(self.m):
                    h.changeCoeff(k + self.d + out, int(self._t[out]), float(prog.A_eq.data[self._floors[out]]))
            t = self._t.astype(np.int32)
            h.changeColsCost(self.m, t, prog.c[self._t])
            h.changeColsBounds(self.m, t, prog.lb[self._t], prog.ub[self._t])
            h.setOptionValue("user_objective_scale", cost_scale(prog.c))
            h.setOptionValue("simplex_dual_edge_weight_strategy", WARM_PRICING["whole"])
            h.setOptionValue("simplex_strategy", 0)
        h.run()
        status = h.getModelStatus()
        text = h.modelStatusToString(status)
        if status != highspy.HighsModelStatus.kOptimal:
            self.highs = None                                  # the next point starts afresh
            return prog, RawSolution("failed", None, None, None, text)
        sol = h.getSolution()
        y = np.asarray(sol.row_dual)
        return prog, RawSolution("optimal", np.asarray(sol.col_value), y[:k], y[k:], text)
