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

Under one ID-LDP notion on K < d budget levels (MinID-LDP), a budget moves only the K^2 m
coefficients e^r(j, k) of the level rows of `IDLDP.linear`; `LevelProgram` replaces them in the first
point's program instead of building the next one (`lp.build`: 1.3 / 1.9 ms at d = 32 /
64, against 0.06 ms), and changes them in the model HiGHS holds, whose simplex goes on from
where the last point ended (`LevelProgram.rerun`; with few levels, `RERUN_SHARE`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..notions.ldp import IDLDP, LDP
from ..notions.lip import LIP
from ..utility import Distortion
from .lp import Program, RawSolution, answer, cost_scale, load_program, new_highs, whole_simplex

MAX_TOP = 3e3
"""Largest upper bound on t (`Parametric.top`) a point takes here (eps up to 8.0 nats, LDP and
LIP); larger budgets are built afresh (`lp.build`). The dual bound meets t's box through its
reduced cost, whose error (HiGHS's dual tolerance, round-off) the box's width multiplies. Against
the LP written pair by pair (60 random problems a notion, d and m 3..11, eps in random order),
the bound's largest shortfall (relative): LDP 5.7e-13 / 5.7e-11 / 2.8e-8 at eps = 6 / 8 / 9.9,
and at eps = 12 one of 2.8e-7 (past `frontend.OPTIMAL_GAP`); LIP 7e-12 / 2e-11 at eps = 6 / 9.9,
and 1.3e-6 at eps = 12 with the box e^2eps - 1 it had before `top`."""


def slack(eps: float, lip: bool) -> float:
    """g, the floor's slack in its own units: e^eps - 1 (LDP) or e^2eps - 1 (LIP)."""
    return float(np.expm1(2 * eps if lip else eps))


def top(eps: float, lip: bool) -> float:
    """An upper bound on t = g l: g (LDP: l <= 1), 2 sinh eps (LIP: l = e^-eps Pr(Y = y) <= e^-eps)."""
    return float(2 * np.sinh(eps)) if lip else slack(eps, lip)


def lip_floor_share(eps: float) -> float:
    """LIP: `sum_x P_x s[x, y] = t[y] / (e^eps + 1)`, the coefficient of t in a floor row."""
    return 1.0 / (np.exp(eps) + 1.0)


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
        return slack(eps, self.lip)

    def top(self, eps: float) -> float:
        return top(eps, self.lip)

    def set_budget(self, eps: float) -> Program:
        """The program at budget eps (this model's arrays, updated in place)."""
        g = self.slack(eps)
        prog = self.program
        prog.A_eq.data[self._total] = -g
        if self.lip:
            prog.A_eq.data[self._floors] = -lip_floor_share(eps)
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
            whole_simplex(h, warm=True)
        h.run()
        raw = answer(h, k, basis=False)
        if raw.status != "optimal":
            self.highs = None                                  # the next point starts afresh
        return prog, raw


RERUN_SHARE = 0.1
"""`LevelProgram.rerun` is used while the level coefficients are at most this share of the program's
nonzeros: `changeCoeff` costs about 1.5 us a coefficient, passing the model again about 0.2 us a
nonzero. HiGHS time a point over 59-point MAE scale sweeps, passed again with the last basis
against changed in place: d = 32, K = 3 (288 coefficients, 5.0% of the nonzeros) 2.76 / 2.26 ms;
K = 6 (15.5%) 5.91 / 6.28 ms; K = 10 (28%) 16.5 / 19.2 ms; d = 64, K = 3 (2.7%) 11.6 / 9.8 ms;
K = 8 (14%) 87.7 / 85.4 ms; K = 16 (31%) 456 / 460 ms."""


class LevelProgram:
    """One ID-LDP notion on K < d budget levels (MinID-LDP, `IDLDP.levels`) along a sweep: the
    program `lp.build` writes (`IDLDP.linear`, floors substituted) depends on the budgets only
    through the coefficients -e^r(j, k) of its K^2 m level rows `v[j, y] - e^r(j, k) u[k, y] <= 0`
    (the floor substitution touches only q's columns). A new point changes those coefficients in
    the first point's program, instead of building it again.

    Parameters
    ----------
    problem : Problem
        A problem `LevelProgram.applies` to.
    prog : Program
        `lp.build(problem)`.
    """

    def __init__(self, problem, prog):
        g, RL = problem.privacy[0].levels
        d, m = problem.d, problem.m
        K = RL.shape[0]
        jk = np.arange(K * K * m)
        self.j, self.k = jk // (K * m), (jk // m) % K
        rows = d * m + jk                       # after q - v <= 0 (the floor rows -q + u <= 0 are gone)
        column = prog.floors[0] + self.k * m + jk % m if prog.floors is not None else None
        A = prog.A_ub
        self.position = None
        if column is not None and A.shape[0] == d * m + jk.size and np.all(np.diff(A.indptr)[rows] == 2):
            first = A.indptr[rows]
            at = first + (A.indices[first + 1] == column)                 # u[k, y]'s entry of each row
            if np.array_equal(A.indices[at], column) and np.array_equal(A.data[at], -np.exp(RL[self.j, self.k])):
                self.position = at
        self.rows, self.columns = rows, column
        self.in_place = rows.size <= RERUN_SHARE * (prog.A_ub.nnz + prog.A_eq.nnz)
        """Whether `rerun` pays (few levels: its coefficients a small share of the program's)."""
        self.problem, self.prog, self.g, self.K = problem, prog, g, K

    @staticmethod
    def applies(problem) -> bool:
        """One `id-ldp` notion whose budgets take fewer levels than inputs, no latent secret."""
        return (len(problem.privacy) == 1 and type(problem.privacy[0]) is IDLDP and problem.latent is None
                and problem.privacy[0].levels is not None)

    def takes(self, problem) -> bool:
        """Whether `problem` is this program's at other budgets: the same prior, utility, sizes and
        levels of inputs (only the level budgets differ), and the first program's layout found."""
        first = self.problem
        if self.position is None or not LevelProgram.applies(problem):
            return False
        found = problem.privacy[0].levels
        return (problem.d == first.d and problem.m == first.m
                and problem.utility is first.utility and np.array_equal(problem.prior, first.prior)
                and np.array_equal(found[0], self.g) and found[1].shape == (self.K, self.K))

    def program(self, problem):
        """The program of `problem` (`takes` holds): the first one, its level coefficients changed in
        place (as `Parametric.set_budget` does; a sweep is done with the previous point's program by
        then), so that the transposes the dual bound uses stay those of the first point's matrix
        (`Program.transposes`), not built again each point."""
        RL = problem.privacy[0].levels[1]
        self.prog.A_ub.data[self.position] = -np.exp(RL[self.j, self.k])
        return self.prog

    def rerun(self, h, prog: Program) -> RawSolution:
        """`prog` (`program`'s) solved in `h`, the HiGHS instance that has just solved another
        program of this class: its K^2 m level coefficients changed in place, and its simplex
        continuing from the basis it ended on. At d = 32 / 64 / 128 (K = 3) a 100-point scale
        sweep's HiGHS time is 2.3 / 10.6 / 60 ms a point, against 2.8 / 12.5 / 75 ms for passing
        the model again with the last basis (`lp.solve_highs`); only where `in_place`."""
        values = prog.A_ub.data[self.position]
        for r, c, v in zip(self.rows.tolist(), self.columns.tolist(), values.tolist()):
            h.changeCoeff(r, c, v)
        whole_simplex(h, warm=True)
        h.run()
        return answer(h, prog.b_ub.size)
