"""Compact formulations against the full pairwise LP, written independently here (dense rows,
one per ordered pair of inputs and output, solved by scipy's linprog)."""

import numpy as np
import pytest
from scipy.optimize import linprog

import channelopt as co
from channelopt.methods.lp import build
from channelopt.notions.lip import extreme_points


def full_lp(P, D, pair_ratio, floors=()):
    """min sum_x P_x sum_y q[x,y] D[x,y] s.t. q[x,y] <= pair_ratio[x,x'] q[x',y] for all x != x',
    plus e^-eps p.q_y <= q[x,y] <= e^eps p.q_y for every (p, eps) in floors; rows sum to 1."""
    d = P.size
    m = D.shape[1]
    rows = []
    for x in range(d):
        for x2 in range(d):
            if x == x2 or not np.isfinite(pair_ratio[x, x2]):
                continue
            for y in range(m):
                r = np.zeros((d, m))
                r[x, y], r[x2, y] = 1.0, -pair_ratio[x, x2]
                rows.append(r.ravel())
    for p, eps in floors:
        for x in range(d):
            for y in range(m):
                hi = np.zeros((d, m))
                hi[:, y] -= np.exp(eps) * p
                hi[x, y] += 1.0
                lo = np.zeros((d, m))
                lo[:, y] += np.exp(-eps) * p
                lo[x, y] -= 1.0
                rows += [hi.ravel(), lo.ravel()]
    A_eq = np.kron(np.eye(d), np.ones((1, m)))
    res = linprog((P[:, None] * D).ravel(), A_ub=np.array(rows) if rows else None,
                  b_ub=np.zeros(len(rows)) if rows else None, A_eq=A_eq, b_eq=np.ones(d),
                  bounds=(0, 1), method="highs")
    assert res.status == 0, res.message
    return res.fun


def instance(rng, d):
    return rng.dirichlet(np.ones(d)), rng.random((d, d))


@pytest.mark.parametrize("seed", range(8))
def test_ldp_per_output_floor_equals_pairwise(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 8))
    P, D = instance(rng, d)
    eps = float(rng.uniform(0.1, 3))
    full = full_lp(P, D, np.full((d, d), np.exp(eps)))
    problem = co.Problem(prior=P, privacy=[co.LDP(eps)], utility=co.Distortion("distortion", matrix=D))
    r = co.solve(problem)
    assert r.ok
    assert r.objective == pytest.approx(full, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("combine", ["min", "avg", "max", "callable"])
@pytest.mark.parametrize("seed", range(5))
def test_idldp_per_level_equals_pairwise(seed, combine):
    rng = np.random.default_rng(100 + seed)
    d = int(rng.integers(3, 8))
    P, D = instance(rng, d)
    levels = rng.uniform(0.2, 2.5, size=int(rng.integers(1, 4)))
    eps = rng.choice(levels, size=d)
    fn = {"min": np.minimum, "avg": lambda a, b: (a + b) / 2, "max": np.maximum,
          "callable": lambda a, b: 0.5 * np.minimum(a, b) + 0.25 * np.maximum(a, b)}[combine]
    R = np.exp(fn(eps[:, None], eps[None, :]))
    full = full_lp(P, D, R)
    notion = co.IDLDP(epsilons=eps, combine=fn if combine == "callable" else combine)
    problem = co.Problem(prior=P, privacy=[notion], utility=co.Distortion("distortion", matrix=D))
    r = co.solve(problem)
    assert r.ok and r.leakage["id-ldp"] <= 1 + 1e-7
    assert r.objective == pytest.approx(full, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_idldp_pair_budgets_on_levels_take_the_per_level_form_and_equal_pairwise(seed):
    """Pair budgets given directly (`pair_epsilons`) that depend only on classes of inputs are
    found (`IDLDP.levels`, the classes permuted at random) and compiled per level, with the
    full pairwise LP's optimum; a matrix off that structure by one entry is never merged wrongly."""
    rng = np.random.default_rng(300 + seed)
    d = int(rng.integers(4, 9))                                               # > K: some class has two inputs
    P, D = instance(rng, d)
    K = int(rng.integers(1, 4))
    g = rng.integers(0, K, size=d)
    B = rng.uniform(0.2, 2.5, size=(K, K))
    R = B[g][:, g]
    np.fill_diagonal(R, 0.0)
    notion = co.IDLDP(pair_epsilons=R)
    found = notion.levels
    assert found is not None and found[1].shape[0] <= K
    h, RL = found
    off = ~np.eye(d, dtype=bool)
    assert np.array_equal(RL[h][:, h][off], R[off])                          # the same budget for every pair
    problem = co.Problem(prior=P, privacy=[notion], utility=co.Distortion("distortion", matrix=D))
    prog = build(problem)
    assert prog.A_ub.shape[0] == d * d + RL.shape[0] ** 2 * d               # per level, as with per-input budgets
    r = co.solve(problem)
    assert r.ok and r.leakage["id-ldp"] <= 1 + 1e-7
    assert r.objective == pytest.approx(full_lp(P, D, np.exp(R)), rel=1e-8, abs=1e-10)
    q = rng.dirichlet(np.ones(d), size=d)                                     # leakage by levels = by pairs
    with np.errstate(divide="ignore"):
        ratio = np.log(q[:, None, :] / q[None, :, :]).max(axis=2)
    assert notion.leakage(problem, q) == pytest.approx(float((ratio[off] / R[off]).max()), rel=1e-12)
    R2 = R.copy()
    R2[0, 1] += 0.01                                                          # off the structure: never merged wrongly
    other = co.IDLDP(pair_epsilons=R2).levels
    assert other is None or np.array_equal(other[1][other[0]][:, other[0]][off], R2[off])


def test_compact_forms_are_smaller():
    d = 40
    P = np.full(d, 1 / d)
    eps = np.where(np.arange(d) < 4, 1.0, 2.0)
    hamming = co.Distortion("hamming")
    ldp = build(co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=hamming))
    assert ldp.A_ub.shape[0] == d * d  # pairwise: d(d-1)d rows; per-output bounds: 2 d^2; substituted: d^2
    minid = build(co.Problem(prior=P, privacy=[co.IDLDP(epsilons=eps)], utility=hamming))
    assert minid.A_ub.shape[0] == d * d + 4 * d  # K = 2 levels: dm ceiling rows + K^2 m level rows


@pytest.mark.parametrize("seed", range(6))
def test_bplip_dropping_dominated_priors_keeps_the_optimum(seed):
    rng = np.random.default_rng(200 + seed)
    d = int(rng.integers(2, 6))
    P, D = instance(rng, d)
    corners = rng.dirichlet(np.ones(d), size=3)
    mixes = rng.dirichlet(np.ones(3), size=4) @ corners  # dominated: convex combinations
    priors = np.vstack([corners, mixes, corners[:1]])
    keep = extreme_points(priors)
    assert set(keep) <= {0, 1, 2}
    eps = float(rng.uniform(0.3, 2))
    full = full_lp(P, D, np.full((d, d), np.inf), floors=[(p, eps) for p in priors])
    notion = co.BPLIP(eps, priors=priors.tolist())
    problem = co.Problem(prior=P, privacy=[notion], utility=co.Distortion("distortion", matrix=D))
    r = co.solve(problem)
    assert r.ok
    assert r.objective == pytest.approx(full, rel=1e-8, abs=1e-10)
    # the audit still ranges over every prior of the set, dominated or not
    q = r.channel
    worst = max(np.max(np.abs(np.log(q[:, (p @ q) > 0] / (p @ q)[(p @ q) > 0]))) for p in priors)
    assert r.leakage["bp-lip"] == pytest.approx(worst, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_pufferfish_sparse_form_equals_column_rows(seed):
    """The auxiliary-variable form against the dense pair rows applied to every column."""
    from channelopt.notions.base import per_column

    rng = np.random.default_rng(300 + seed)
    d, k = int(rng.integers(2, 7)), int(rng.integers(2, 4))
    pg, T = rng.dirichlet(np.ones(k)), rng.dirichlet(np.ones(d), size=k)
    D = rng.random((d, d))
    scen = [{"prior": rng.dirichlet(np.ones(k)).tolist(), "conditional": rng.dirichlet(np.ones(d), size=k).tolist()}
            for _ in range(int(rng.integers(0, 3)))]
    notion = co.Pufferfish(float(rng.uniform(0.2, 2)), scenarios=scen or None,
                           pairs=[[0, 1]] if seed % 3 == 0 else None)
    problem = co.Problem(prior=pg @ T, latent={"prior": pg, "conditional": T}, privacy=[notion],
                         utility=co.Distortion("distortion", matrix=D))
    r = co.solve(problem)
    C = notion.column_rows(problem)
    m = d
    A = per_column(C, m).A_q.toarray()
    res = linprog((problem.prior[:, None] * D).ravel(), A_ub=A, b_ub=np.zeros(len(A)),
                  A_eq=np.kron(np.eye(d), np.ones((1, m))), b_eq=np.ones(d), bounds=(0, 1), method="highs")
    assert r.ok and res.status == 0
    assert r.objective == pytest.approx(res.fun, rel=1e-8, abs=1e-10)
