"""Two methods agree on extreme inputs: prior entries down to 1e-9, uniform priors, budgets from
0.02 to 20 nats, values offset by 1e6.

- Bayes utilities under LIP and LDP: vertex enumeration against the structured column
  generation (exact pricing over LIP's box or LDP's cone), a second algorithm; under ALIP, the
  structured pricing on its box against the generic one over its own rows.
- Distortions under LIP, LDP and MinID-LDP: `solve` against the LP written out pair by pair
  (no floor, no substitution, no closed form, no reduced LP) and solved by scipy's linprog.
- Batches: `solve_batch` (critical regions, per-user LPs) against `solve` user by user.

These draws found four faults, each fixed with its own test: the posterior-space rows rounded to
1e-14 (`test_bayes`), the master LP's rows met only after HiGHS's scaling (`posterior.polish`),
the generic pricing in posterior coordinates, and the relaxation of rows past the solvers' range.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog

import channelopt as co


def extreme_prior(rng, d: int) -> np.ndarray:
    P = rng.dirichlet(np.ones(d) * rng.choice([0.3, 1.0, 5.0]))
    if rng.random() < 0.4:
        k = int(rng.integers(1, d // 2))
        P[rng.choice(d, k, replace=False)] = 10.0 ** rng.uniform(-9, -4, k)
        P /= P.sum()
    if rng.random() < 0.2:
        P = np.full(d, 1.0 / d)
    return P


def bayes_case(seed: int) -> co.Problem:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(6, 12))
    P = extreme_prior(rng, d)
    eps = float(rng.choice([rng.uniform(0.02, 0.3), rng.uniform(0.3, 4), rng.uniform(4, 20)]))
    kind = str(rng.choice(["bayes-mse", "histogram-mse", "mutual-information", "map"]))
    notion = co.LIP(eps) if rng.random() < 0.5 else co.LDP(eps)
    values = None
    if rng.random() < 0.5:
        values = rng.choice([0.0, 1e5, -1e6]) + rng.choice([1e-3, 1.0, 1e4]) * np.cumsum(rng.uniform(0.1, 3, d))
    util = co.Bayes(kind, offset=float(rng.choice([0.0, 1e6]))) if kind == "bayes-mse" else co.Bayes(kind)
    return co.Problem(prior=P, values=values, privacy=[notion], utility=util)


def alip_case(seed: int) -> co.Problem:
    rng = np.random.default_rng(1000 + seed)
    d = int(rng.integers(9, 13))
    P = extreme_prior(rng, d)
    lower, upper = (float(rng.choice([rng.uniform(0.02, 0.3), rng.uniform(0.3, 4), rng.uniform(4, 30)])) for _ in range(2))
    kind = str(rng.choice(["bayes-mse", "histogram-mse", "mutual-information", "map"]))
    values = None if rng.random() < 0.5 else 1e5 + np.cumsum(rng.uniform(0.1, 3, d))
    return co.Problem(prior=P, values=values, privacy=[co.ALIP(epsilon_lower=lower, epsilon_upper=upper)],
                      utility=co.Bayes(kind))


@pytest.mark.parametrize("seed", range(12))
def test_alip_on_lips_box_agrees_with_the_generic_pricing_over_its_own_rows(seed):
    """ALIP above d = 8 takes LIP's structured pricing on the box [e^-eps_l, e^eps_u]; the generic
    column generation prices over ALIP's own rows (`posterior_rows`), a second description of the
    same polytope. 300 such draws: all certified by the first, 295 by the second, no bound below
    the other's audited channel."""
    problem = alip_case(seed)
    a = co.solve(problem, time_limit=30)
    b = co.solve(problem, bayes_options={"posterior": "columns"}, time_limit=30)
    assert a.status == "optimal", a.message
    sense = 1.0 if problem.utility.sense == "max" else -1.0
    scale = max(1.0, abs(a.objective))
    for x, y in ((a, b), (b, a)):
        assert co.audit(problem, y.full_channel).ok
        assert sense * (x.certificate.bound - y.objective) >= -1e-9 * scale
    if b.status == "optimal":
        assert b.objective == pytest.approx(a.objective, rel=2e-7, abs=2e-7)


@pytest.mark.parametrize("seed", range(24))
def test_bayes_vertex_enumeration_and_structured_pricing_agree(seed):
    problem = bayes_case(seed)
    a = co.solve(problem, bayes_options={"posterior": "enumerate"}, time_limit=30)
    b = co.solve(problem, bayes_options={"posterior": "structured"}, time_limit=30)
    assert a.status == "optimal", a.message
    sense = 1.0 if problem.utility.sense == "max" else -1.0
    scale = max(1.0, abs(a.objective))
    for x, y in ((a, b), (b, a)):                 # each bound holds for the other's audited channel
        assert co.audit(problem, y.full_channel).ok
        assert sense * (x.certificate.bound - y.objective) >= -1e-9 * scale
    if b.status == "optimal":
        assert b.objective == pytest.approx(a.objective, rel=2e-7, abs=2e-7)


def test_a_generic_pricing_lp_the_dual_simplex_cannot_start_is_solved_by_the_primal_one():
    """DI at 19.4 nats on a prior spanning 4,470 (rows spanning 1e9 in u = post / P): HiGHS's dual
    simplex stops "Not Set" from scratch on three of the starting columns' LPs, and the generic
    column generation raised; `solve` then returned the constant channel (I = 0, no bound). Its
    posteriors' smallest coordinates then missed the audit's ratios (an LP's absolute tolerance)
    until `posterior.snap`. The truth: the LP over every vertex (Qhull), here d = 6."""
    P = np.array([0.8505945183841102, 0.11637263091262035, 0.00019038272987907285, 0.0006286925672339998,
                  0.0005849944197860641, 0.031628780986370265])
    problem = co.Problem(prior=P, privacy=[co.DI(19.40450395025332)], utility=co.Bayes("mutual-information"))
    exact = co.solve(problem, bayes_options={"posterior": "enumerate"})
    assert exact.status == "optimal" and exact.certificate.details["algorithm"] == "vertex-enumeration"
    r = co.solve(problem, bayes_options={"posterior": "columns"}, time_limit=30)
    assert r.certificate is not None and r.certificate.details["algorithm"] == "column-generation"
    assert co.audit(problem, r.full_channel).ok
    assert r.certificate.bound >= exact.objective - 1e-9
    # was 0 (the constant channel); then 3e-5 below, `local`, until its posteriors were snapped
    assert r.status == "optimal", r.message
    assert r.objective == pytest.approx(exact.objective, abs=1e-9)


def test_qhull_vertices_off_their_ratio_rows_are_raised_onto_them_not_refused():
    """DI at 18 nats with a prior entry of 7.3e-9: Qhull's vertices broke the ratio rows by 1.6e-8
    (past VERTEX_TOL) and enumeration raised "vertex enumeration produced a point violating the
    constraints". Raised onto their rows (`posterior.snap`), they give the optimum the column
    generation certifies by its own pricing (a second method)."""
    P = np.array([0.17222741012985962, 7.279928106445754e-09, 0.32781570684425426, 0.09042429665644375,
                  0.21068913176568002, 0.19884344732383422])
    problem = co.Problem(prior=P, privacy=[co.DI(17.9816967849932)], utility=co.Bayes("histogram-mse"))
    a = co.solve(problem, bayes_options={"posterior": "enumerate"})
    b = co.solve(problem, bayes_options={"posterior": "columns"}, time_limit=30)
    assert a.status == "optimal" and a.certificate.details["algorithm"] == "vertex-enumeration"
    assert b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, abs=1e-9)
    for x, y in ((a, b), (b, a)):
        assert x.certificate.bound <= y.objective + 1e-9            # MSE: each bound below the other's channel


def test_snap_raises_clipped_coordinates_of_ldp_vertices_onto_their_exact_ratios():
    """`posterior.snap` against LDP's vertices in closed form, P (1 + (e^eps - 1) 1_S) normalized,
    whose coordinates of prior 1e-11 and 3e-10 were clipped to 0 (as a pricing LP's absolute
    tolerance leaves them): each snapped posterior meets every ratio row to round-off; one whose
    clipped coordinates lie outside S is the exact vertex again, to 1e-12 relative in every
    coordinate (a clipped coordinate in S comes back at the least admissible value, outside S: a
    neighbouring vertex, a few 1e-9 away); posteriors with nothing clipped move by round-off only."""
    from channelopt.methods.posterior import posterior_rows, snap

    rng = np.random.default_rng(3)
    d, eps = 7, 2.5
    P = rng.dirichlet(np.ones(d))
    P[[1, 4]] = [1e-11, 3e-10]
    P /= P.sum()
    problem = co.Problem(prior=P, privacy=[co.LDP(eps)], utility=co.Bayes("mutual-information"))
    A = posterior_rows(problem)
    S = rng.random((12, d)) < 0.5
    exact = P * (1 + np.expm1(eps) * S)
    exact /= exact.sum(axis=1, keepdims=True)
    clipped = exact.copy()
    clipped[:6, [1, 4]] = 0.0
    def broken(V):                # the largest violation of a row, relative to its terms
        terms = np.abs(A) @ V.T
        return np.max(np.divide(A @ V.T, terms, out=np.zeros_like(terms), where=terms > 0))

    snapped = snap(clipped, A)
    assert broken(clipped) > 0.9 and broken(snapped) <= 1e-15
    assert np.abs(snapped - exact).max() <= 2 * np.expm1(eps) * P[[1, 4]].sum()     # (and the normalization)
    out = np.flatnonzero(~S[:6, 1] & ~S[:6, 4])                   # both clipped coordinates outside S
    assert out.size >= 3
    assert np.allclose(snapped[out] / exact[out], 1.0, rtol=0, atol=1e-12)
    assert np.allclose(snapped[6:], exact[6:], rtol=1e-15, atol=0)       # nothing to raise but round-off


def pairwise_lp(problem: co.Problem, budgets) -> float:
    """min E[D] with every LIP (G = X) or ID-LDP row written out; budgets: eps (LIP) or per input
    (a pair whose smaller budget is infinite gets no row)."""
    P, D = problem.prior, problem.utility.matrix_for(problem)
    d, m = D.shape
    rows, cols, vals = [], [], []
    r = 0
    if np.ndim(budgets) == 0:          # LIP: e^-eps Pr(y) <= q[x, y] <= e^eps Pr(y)
        for x in range(d):
            for y in range(m):
                for own, factor in ((1.0, -np.exp(budgets)), (-1.0, np.exp(-budgets))):
                    v = factor * P
                    v[x] += own
                    rows += [r] * d
                    cols += [x2 * m + y for x2 in range(d)]
                    vals += list(v)
                    r += 1
    else:                              # q[x, y] <= e^min(eps_x, eps_x') q[x', y]
        for x in range(d):
            for x2 in range(d):
                if x != x2 and np.isfinite(min(budgets[x], budgets[x2])):
                    e = np.exp(min(budgets[x], budgets[x2]))
                    for y in range(m):
                        rows += [r, r]
                        cols += [x * m + y, x2 * m + y]
                        vals += [1.0, -e]
                        r += 1
    A = sparse.csr_matrix((vals, (rows, cols)), shape=(r, d * m))
    res = linprog((P[:, None] * D).ravel(), A_ub=A, b_ub=np.zeros(r), A_eq=sparse.kron(sparse.eye(d), np.ones((1, m))),
                  b_eq=np.ones(d), bounds=(0, 1), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", range(24))
def test_distortion_lps_equal_the_lp_written_pair_by_pair(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(4, 14))
    P = extreme_prior(rng, d)
    eps = float(rng.uniform(0.05, 6))
    kind = str(rng.choice(["lip", "ldp", "minid"]))
    ukind = str(rng.choice(["hamming", "mae", "squared", "matrix"]))
    if ukind == "matrix":
        m = d + int(rng.integers(-2, 4))
        util, values = co.Distortion("distortion", matrix=rng.uniform(0, 1, (d, m))), None
    else:
        m = None
        util, values = co.Distortion(ukind), (np.sort(rng.normal(0, 3, d)) if rng.random() < 0.5 else None)
    if kind == "lip":
        notion, budgets = co.LIP(eps), eps
    else:
        budgets = np.full(d, eps) if kind == "ldp" else eps * rng.choice([0.5, 1.0, 2.0], d)
        notion = co.LDP(eps) if kind == "ldp" else co.IDLDP(epsilons=budgets)
    problem = co.Problem(prior=P, values=values, privacy=[notion], utility=util, output_size=m)
    r = co.solve(problem)
    ref = pairwise_lp(problem, budgets)
    assert r.status == "optimal" and co.audit(problem, r.full_channel).ok
    assert r.objective == pytest.approx(ref, rel=1e-7, abs=1e-7)
    assert r.certificate.bound <= ref + 1e-8 * max(1.0, abs(ref))


@pytest.mark.parametrize("seed", range(4))
def test_a_batch_of_extreme_priors_equals_solve_user_by_user(seed, tmp_path):
    import dataclasses

    from channelopt.batch import solve_batch

    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(4, 7))
    eps = float(rng.choice([rng.uniform(0.05, 1), rng.uniform(1, 5), rng.uniform(5, 20)]))
    notion = co.LIP(eps) if seed % 2 == 0 else co.LDP(eps)
    util = [co.Bayes("bayes-mse"), co.Bayes("mutual-information"), co.Distortion("mae"), co.Bayes("map")][seed]
    template = co.Problem(prior=np.full(d, 1.0 / d), privacy=[notion], utility=util)
    priors = np.array([extreme_prior(rng, d) for _ in range(20)])
    solve_batch(priors, template, out=tmp_path / "r.npz")
    data = np.load(tmp_path / "r.npz", allow_pickle=False)
    names = list(data["status_names"])
    for i, P in enumerate(priors):
        r = co.solve(dataclasses.replace(template, prior=P))
        assert names[data["status"][i]] == r.status == "optimal"
        assert data["objective"][i] == pytest.approx(r.objective, rel=1e-7, abs=1e-9)


def test_snap_on_rows_spanning_past_the_float_range_raises_no_warning():
    """A two-term row whose coefficients span more than the float range (1e10 against 1e-300): its
    quotient one way overflows, which np.where computed too and whose warning reached the user's
    terminal; it is not used. The row itself holds, and a row of ordinary span still snaps the
    posterior."""
    import warnings

    from channelopt.methods.posterior import snap

    A = np.array([[-1e10, 1e-300, 0.0], [2.0, 0.0, -1.0]])      # v0 >= 1e-310 v1 (holds); v2 >= 2 v0
    V = np.array([[0.4, 0.5, 0.1]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = snap(V, A)
    assert out[0, 2] >= 2 * out[0, 0] * (1 - 1e-15)
    assert out.sum() == pytest.approx(1.0)


def test_vertex_lp_bound_is_not_thrown_off_by_a_tiny_prior_entry():
    """A status fuzz problem (seed 23): metric-LDP at 31.4 nats, bayes-mse, one prior entry 3.5e-6,
    the LP over its 70 vertices. HiGHS's duals, divided by P from its scaled rows, put the bound
    8.4e-7 above the LP's value (gain units), so an optimal channel was reported `local` ("the
    search stopped (None)"). The basis's own duals close it: the bound meets the vertex LP's value,
    every vertex's reduced cost at them is at most round-off, and the result is optimal."""
    from channelopt.methods.posterior import enumerate_and_solve, posterior_rows
    from channelopt.notions.metric import MetricLDP

    P = np.array([9.3003965914124187e-02, 4.9206761442022939e-01, 3.5185914488964666e-06,
                  4.0983215704483394e-01, 5.0927440293637534e-03])
    values = np.array([-999999.9989750072, -999999.9974817159, -999999.99505075, -999999.9949417864,
                       -999999.9943036925])
    D = np.array([[0.0, 0.24324757034185793, 0.1433792454951236, 0.5786810630067539, 0.615337981879387],
                  [0.24324757034185793, 0.0, 0.38655145595276363, 0.5553303720946382, 0.3787885106674693],
                  [0.1433792454951236, 0.38655145595276363, 0.0, 0.631990800104548, 0.7557950349970878],
                  [0.5786810630067539, 0.5553303720946382, 0.631990800104548, 0.0, 0.6137209624106852],
                  [0.615337981879387, 0.3787885106674693, 0.7557950349970878, 0.6137209624106852, 0.0]])
    problem = co.Problem(prior=P, values=values, privacy=[MetricLDP(epsilon=31.388625943813206, distance=D)],
                         utility=co.Bayes("bayes-mse", offset=1e12))
    solved = enumerate_and_solve(problem, posterior_rows(problem))
    assert len(solved.V) == 70
    assert solved.bound - solved.gain <= 1e-12
    r = co.solve(problem)
    assert r.status == "optimal"
    assert co.audit(problem, r.full_channel).ok
    # the bound is a bound: no channel of the vertices' LP (here the returned one) passes it
    assert r.objective >= r.certificate.bound - 1e-20


@pytest.mark.parametrize("notion", [co.LDP(15.0), co.LDP(20.0), co.LIP(8.0)])
def test_a_master_whose_own_columns_show_round_off_above_the_pricing_tolerance_stops(notion):
    """bayes-mse at d = 64 and large budgets (MSE down to 1e-4 of the prior's variance): the
    master's own columns priced 9e-14 at its duals against a tolerance of 1e-14, so each round
    found them again as new columns, and the loop ran out its time limit with the master unchanged
    (LDP, eps = 15 / 20: `local`, with the trivial bound; LIP, eps = 8: the whole limit). The
    tolerance is now never below what those columns show (`posterior.noise`): the loop stops
    by itself, certified. The second method: a simple mechanism (GRR) is never better, and the
    bound is below every channel the generic column generation finds."""
    P = np.random.default_rng(1).dirichlet(np.ones(64))
    problem = co.Problem(prior=P, privacy=[notion], utility=co.Bayes("bayes-mse"))
    r = co.solve(problem, time_limit=10)          # (it stops in about 0.1 s)
    assert r.status == "optimal", r.message
    assert r.certificate.details.get("stopped") != "time_limit"
    assert co.audit(problem, r.full_channel).ok
    eps = notion.epsilon
    grr = np.full((64, 64), 1.0) + np.expm1(eps) * np.eye(64)
    grr /= grr.sum(axis=1, keepdims=True)
    assert r.objective <= problem.utility.evaluate(problem, grr) + 1e-12
    other = co.solve(problem, bayes_options={"posterior": "columns"}, time_limit=5)
    assert co.audit(problem, other.full_channel).ok
    assert r.certificate.bound <= other.objective + 1e-9 * max(1.0, other.objective)


def test_a_generic_pricing_below_its_round_off_does_not_search_deeper_to_its_time_limit():
    """BP-LIP bayes-mse, d = 5, eps = 31, values offset by 1e5 (a status fuzz problem whose MSE is
    2.3e-18, the prior's variance 2.6e-6): the generic pricing's root bound stood 3.6e-15 above its best
    column, against a tolerance of 1e-15 (a quarter of the gap target relative to an MSE of
    ~0); each round searched 4x deeper and the loop ran out its 30 s time limit. The tolerance is
    now never below the bound's round-off (`posterior.roundoff`). The truth: every MSE is >= 0,
    and the optimum is within [0, the channel's MSE] (Qhull's vertices miss their rows by 3e-9
    here, so the LP over every vertex is not at hand)."""
    P = np.array([0.08719595294183718, 0.050320862626733215, 0.23470118272577795, 0.6277783495247735,
                  3.6521808780666588e-06])
    priors = [[0.11911300236365124, 0.4475626010542566, 0.00057013617028149, 0.15764740303956365, 0.27510685737224716],
              [0.05111134626204652, 0.06301260487015423, 0.87137799721824, 0.010698729937497169, 0.003799321712062062],
              [0.09461609024463127, 0.31459782890060334, 0.13788067093759718, 0.3013324027335285, 0.1515730071836395]]
    values = [100000.0005691184, 100000.00217856339, 100000.00463246774, 100000.00588931206, 100000.0088879229]
    problem = co.Problem(prior=P, privacy=[co.BPLIP(30.70398116016463, priors=priors)],
                         utility=co.Bayes("bayes-mse", offset=1e12), values=values)
    variance = float(P @ (np.array(values) - P @ np.array(values)) ** 2)
    r = co.solve(problem, bayes_options={"posterior": "columns"}, time_limit=30)
    assert r.certificate.details["algorithm"] == "column-generation"
    assert r.certificate.details.get("stopped") != "time_limit"
    assert r.status == "optimal", r.message
    assert co.audit(problem, r.full_channel).ok
    assert 0.0 <= r.certificate.bound <= r.objective <= 1e-12 * variance
