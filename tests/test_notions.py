"""Each notion: audit against a naive second implementation and hand-derived values; known
channels pass, perturbed ones fail; compact formulations equal their pairwise definitions."""

import math
import pickle

import numpy as np
import pytest

import channelopt as co
import reference as ref
from truths import grr_hamming

rng = np.random.default_rng(12345)


def grr(d, eps):
    e = math.exp(eps)
    q = np.full((d, d), 1 / (e + d - 1))
    np.fill_diagonal(q, e / (e + d - 1))
    return q


def random_channel(d, m, zeros=False):
    q = rng.dirichlet(np.ones(m), size=d)
    if zeros:
        q[rng.random((d, m)) < 0.2] = 0
        q[:, 0] += 1e-3
        q /= q.sum(axis=1, keepdims=True)
    return q


def latent_problem(d=4, k=3, notions=(), utility=None):
    pg = rng.dirichlet(np.ones(k))
    T = rng.dirichlet(np.ones(d), size=k)
    return co.Problem(prior=pg @ T, latent={"prior": pg, "conditional": T}, privacy=list(notions),
                      utility=utility or co.Distortion("hamming"))


def leak(problem, q, i=0):
    return problem.privacy[i].leakage(problem, q)


# --- hand-derived values -------------------------------------------------------------------

@pytest.mark.parametrize("d,eps", [(2, 0.5), (4, 1.0), (7, 3.0)])
def test_grr_has_ldp_and_wc_lip_leakage_exactly_eps(d, eps):
    p = co.Problem(prior=np.ones(d) / d, privacy=[co.LDP(eps), co.WCLIP(eps)])
    q = grr(d, eps)
    assert leak(p, q, 0) == pytest.approx(eps, abs=1e-12)
    assert leak(p, q, 1) == pytest.approx(eps, abs=1e-12)


def test_theorem3_channel_lip_leakage_by_hand():
    # LIP-TDSC Theorem 3 channel at eps = ln 10 for P = (0.1, 0.2, 0.7): marginal = P, off-diagonal
    # lifts 1/10, diagonal lifts (1 - (1-P)/10)/P <= 9.1: leakage ln 10.
    P = np.array([0.1, 0.2, 0.7])
    q = np.tile(P / 10, (3, 1))
    np.fill_diagonal(q, 1 - (1 - P) / 10)
    p = co.Problem(prior=P, privacy=[co.LIP(math.log(10))])
    assert leak(p, q) == pytest.approx(math.log(10), abs=1e-12)


def test_binary_symmetric_channel_measures():
    p0 = 0.2
    q = np.array([[1 - p0, p0], [p0, 1 - p0]])
    p = co.Problem(prior=[0.5, 0.5], privacy=[co.LDP(1), co.MIL(1), co.MIP(1), co.DI(1)])
    assert leak(p, q, 0) == pytest.approx(math.log(4))
    assert leak(p, q, 1) == pytest.approx(math.log(1.6))
    h = -(p0 * math.log(p0) + (1 - p0) * math.log(1 - p0))
    assert leak(p, q, 2) == pytest.approx(math.log(2) - h)
    assert leak(p, q, 3) == pytest.approx(math.log(4))


ALL = [co.LDP(1.0), co.LIP(1.0), co.WCLIP(1.0), co.DI(1.5), co.MIL(1.0), co.MIP(1.0),
       co.ALIP(0.5, 1.0), co.IDLDP(epsilons=[1.0, 1.5, 2.0, 2.0]),
       co.BPLIP(1.0, prior_lower=[0.1, 0.1, 0.1, 0.1], prior_upper=[0.5, 0.5, 0.5, 0.5]),
       co.Pufferfish(1.0), co.ApproxLIP(1.0, 0.1), co.ApproxLIP(1.0, 0.1, "set")]


@pytest.mark.parametrize("notion", [n for n in ALL if n.name != "di"], ids=lambda n: n.name)
def test_constant_channel_leaks_nothing(notion):
    p = co.Problem(prior=[0.1, 0.2, 0.3, 0.4], privacy=[notion])
    q = np.tile(rng.dirichlet(np.ones(3)), (4, 1))
    value = leak(p, q)
    values = value.values() if isinstance(value, dict) else [value]
    assert all(v == pytest.approx(0.0, abs=1e-12) for v in values)


def test_constant_channel_di_is_the_prior_spread():
    # DI compares posteriors, which equal the prior when Y is independent of X
    p = co.Problem(prior=[0.1, 0.2, 0.3, 0.4], privacy=[co.DI(1.0)])
    assert leak(p, np.full((4, 2), 0.5)) == pytest.approx(math.log(4.0))


# --- audit vs the naive reference implementation -------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_audit_matches_reference_on_random_channels(seed):
    global rng
    rng = np.random.default_rng(seed)
    d, m, k = 4, 3 + seed % 3, 3
    q = random_channel(d, m, zeros=seed % 2 == 1)
    P = rng.dirichlet(np.ones(d))
    p = co.Problem(prior=P, privacy=[co.LDP(1), co.LIP(1), co.DI(1), co.MIL(1), co.MIP(1),
                                      co.ApproxLIP(1.0, 0.1), co.ApproxLIP(1.0, 0.1, "set")])
    ql = q.tolist()
    I = np.eye(d).tolist()
    assert leak(p, q, 0) == pytest.approx(ref.ldp(ql))
    assert leak(p, q, 1) == pytest.approx(ref.lip(P.tolist(), I, ql))
    assert leak(p, q, 2) == pytest.approx(ref.di(P.tolist(), ql))
    assert leak(p, q, 3) == pytest.approx(ref.mil(ql))
    assert leak(p, q, 4) == pytest.approx(ref.mip(P.tolist(), ql))
    assert leak(p, q, 5) == pytest.approx(ref.approx_delta(P.tolist(), ql, 1.0, "pointwise"))
    assert leak(p, q, 6) == pytest.approx(ref.approx_delta(P.tolist(), ql, 1.0, "set"))
    lp = latent_problem(d, k, [co.LIP(1), co.ALIP(0.3, 0.7), co.Pufferfish(1.0)])
    pg, T = lp.latent.prior.tolist(), lp.latent.conditional.tolist()
    low, up = ref.lift_bounds(pg, T, ql)
    assert leak(lp, q, 0) == pytest.approx(max(low, up))
    assert leak(lp, q, 1) == {"lower": pytest.approx(low), "upper": pytest.approx(up)}
    pairs = [(i, j) for i in range(k) for j in range(k) if i != j]
    assert leak(lp, q, 2) == pytest.approx(ref.pufferfish([(pg, T)], pairs, ql))
    eps = np.array([1.0, 2.0, 2.0, 3.0])
    for combine, r in (("min", min), ("avg", lambda a, b: (a + b) / 2)):
        pi = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=eps, combine=combine)])
        assert leak(pi, q) == pytest.approx(ref.idldp_ratio(lambda x, y: r(eps[x], eps[y]), ql))


def test_lift_extremes_equal_the_lifts_entry_by_entry_with_zeros_and_boundary_secrets():
    """`lift_extremes` takes each output's extreme lifts from its column's extremes; the reference
    forms every lift Pr(y | g) / Pr(y) (`reference.lift_bounds`). Channels with zero entries and
    zero columns, secrets with a zero prior or a zero conditional (outputs one secret never takes,
    lam = 0 < Pr(y | g) on the boundary: +inf)."""
    from channelopt.notions.lip import lift_extremes
    from channelopt.problem import Joint

    r = np.random.default_rng(11)
    infinite = 0
    for _ in range(400):
        d, m, k = int(r.integers(1, 6)), int(r.integers(1, 6)), int(r.integers(1, 4))
        q = r.dirichlet(np.ones(m), size=d)
        q[r.random((d, m)) < 0.4] = 0.0
        q[np.arange(d), r.integers(m, size=d)] += 0.1
        q /= q.sum(axis=1, keepdims=True)
        pg, T = r.dirichlet(np.ones(k)), r.dirichlet(np.ones(d), size=k)
        if r.random() < 0.3 and k > 1:
            pg[0] = 0.0
            pg /= pg.sum()
        if r.random() < 0.5:
            T[r.random((k, d)) < 0.4] = 0.0
            T[np.arange(k), r.integers(d, size=k)] += 0.1
            T /= T.sum(axis=1, keepdims=True)
        low, up = ref.lift_bounds(pg.tolist(), T.tolist(), q.tolist())
        got = lift_extremes(Joint(pg, T), q)
        infinite += bool(np.isinf(up) or np.isinf(low))
        assert got == (pytest.approx(low, rel=1e-12, abs=1e-15), pytest.approx(up, rel=1e-12, abs=1e-15))
    assert infinite >= 20                              # the boundary cases occur


def test_zero_entry_makes_lip_and_ldp_infinite():
    q = np.array([[0.5, 0.5], [0.0, 1.0]])
    p = co.Problem(prior=[0.5, 0.5], privacy=[co.LDP(1), co.LIP(1), co.DI(1)])
    assert leak(p, q, 0) == math.inf and leak(p, q, 1) == math.inf and leak(p, q, 2) == math.inf


def test_bp_lip_audit_covers_the_whole_box():
    # the worst prior of a box is a vertex; a fine scan of the box's segment agrees
    q = random_channel(2, 2)
    p = co.Problem(prior=[0.7, 0.3], privacy=[co.BPLIP(1.0, prior_lower=[0.6, 0.2], prior_upper=[0.8, 0.4])])
    scan = max(ref.lip([1 - t, t], [[1, 0], [0, 1]], q.tolist()) for t in np.linspace(0.2, 0.4, 2001))
    assert leak(p, q) == pytest.approx(scan, abs=1e-12)


# --- solved channels pass; perturbed channels fail -----------------------------------------

@pytest.mark.parametrize("notion", [n for n in ALL if n.name != "mip"] + [co.MIP(0.3)], ids=lambda n: n.name)
def test_solved_channel_passes_and_perturbation_fails(notion):
    p = co.Problem(prior=[0.1, 0.2, 0.3, 0.4], privacy=[notion], utility=co.Distortion("hamming"))
    result = co.solve(p)
    assert result.ok, result.message
    audit = co.audit(p, result.channel)
    assert audit.ok
    # move mass toward the identity: less noise can only leak more once the budget is tight
    q = result.full_channel + 0.05 * (np.eye(4) - result.full_channel)
    assert not co.audit(p, q).ok


# --- equivalent formulations --------------------------------------------------------------

def _solve_with_rows(problem, notion):
    """Same problem, but the notion compiled from its per-column definition rows."""
    from channelopt.notions.base import per_column

    class Rows(type(notion)):
        def linear(self, prob):
            return per_column(notion.column_rows(prob), prob.m)

    clone = Rows.__new__(Rows)
    clone.__dict__.update(notion.__dict__)
    for k, v in vars(notion).items():
        object.__setattr__(clone, k, v)
    return co.solve(co.Problem(prior=problem.prior, latent=problem.latent, privacy=[clone],
                               utility=problem.utility))


@pytest.mark.parametrize("seed", range(6))
def test_compact_formulations_equal_the_pairwise_definitions(seed):
    r = np.random.default_rng(seed)
    d = 5
    P = r.dirichlet(np.ones(d) * 0.7)
    D = r.random((d, d))
    util = co.Distortion("distortion", matrix=D.tolist())
    eps = r.choice([0.5, 1.0, 2.0], size=d)
    for notion, latent in [(co.LDP(0.8), None), (co.IDLDP(epsilons=eps), None), (co.LIP(0.6), None),
                           (co.LIP(0.4), "latent"), (co.ALIP(0.3, 0.9), "latent"),
                           (co.BPLIP(0.7, prior_lower=[0.05] * d, prior_upper=[0.5] * d), None)]:
        if latent:
            pg = r.dirichlet(np.ones(3))
            T = r.dirichlet(np.ones(d), size=3)
            p = co.Problem(prior=pg @ T, latent={"prior": pg, "conditional": T}, privacy=[notion], utility=util)
        else:
            p = co.Problem(prior=P, privacy=[notion], utility=util)
        compact = co.solve(p)
        rows = _solve_with_rows(p, notion)
        assert compact.ok and rows.ok
        assert compact.objective == pytest.approx(rows.objective, abs=1e-8), notion.name


@pytest.mark.parametrize("seed", range(5))
def test_wc_lip_and_ldp_give_identical_optima(seed):
    r = np.random.default_rng(seed)
    d = 3 + seed % 3
    P = r.dirichlet(np.ones(d))
    D = r.random((d, d))
    eps = float(r.uniform(0.2, 3))
    a = co.solve(co.Problem(prior=P, privacy=[co.LDP(eps)], utility=co.Distortion("distortion", matrix=D)))
    b = co.solve(co.Problem(prior=P, privacy=[co.WCLIP(eps)], utility=co.Distortion("distortion", matrix=D)))
    assert a.objective == pytest.approx(b.objective, abs=1e-8)


@pytest.mark.parametrize("d,eps", [(2, 0.5), (3, 1.0), (5, 2.0), (8, 0.3)])
def test_uniform_ldp_hamming_optimum_is_grr(d, eps):
    result = co.solve(co.Problem(prior=np.ones(d) / d, privacy=[co.LDP(eps)], utility=co.Distortion("hamming")))
    assert result.objective == pytest.approx(grr_hamming(d, eps), abs=1e-9)


def test_di_is_infeasible_when_the_prior_spread_exceeds_e_eps():
    # DI forces q[3,y] <= e^eps P0/P3 q[0,y] for every y; summing over y gives 1 <= e^eps / 4
    for eps, feasible in ((1.0, False), (math.log(4) - 1e-3, False), (math.log(4) + 1e-3, True)):
        r = co.solve(co.Problem(prior=[0.1, 0.2, 0.3, 0.4], privacy=[co.DI(eps)], utility=co.Distortion("hamming")))
        assert (r.status == "optimal") == feasible and (r.status == "infeasible") != feasible


def test_several_notions_at_once_intersect():
    P = [0.1, 0.2, 0.3, 0.4]
    both = co.Problem(prior=P, privacy=[co.LIP(0.5), co.LDP(1.5)], utility=co.Distortion("hamming"))
    r = co.solve(both)
    assert r.ok and r.leakage["lip"] <= 0.5 + 1e-7 and r.leakage["ldp"] <= 1.5 + 1e-7
    lip_only = co.solve(co.Problem(prior=P, privacy=[co.LIP(0.5)], utility=co.Distortion("hamming")))
    assert r.objective >= lip_only.objective - 1e-9


def test_repeated_notion_keys_get_suffixes():
    p = co.Problem(prior=[0.5, 0.5], privacy=[co.LIP(1.0), co.LIP(2.0)], utility=co.Distortion("hamming"))
    assert set(co.solve(p).leakage) == {"lip", "lip#2"}


def test_minimax_distortion_over_prior_set_is_the_worst_case():
    D = np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float)
    priors = [[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]]
    p = co.Problem(prior=[0.35, 0.3, 0.35], privacy=[co.LDP(1.0)],
                   utility=co.Distortion("distortion", matrix=D, priors=priors))
    r = co.solve(p)
    worst = max(float(np.sum(np.array(pr)[:, None] * r.full_channel * D)) for pr in priors)
    assert r.objective == pytest.approx(worst)
    # minimax is at least each single-prior optimum and at most the value of each of those channels
    for pr in priors:
        single = co.solve(co.Problem(prior=pr, privacy=[co.LDP(1.0)], utility=co.Distortion("distortion", matrix=D)))
        assert r.objective >= single.objective - 1e-9
        assert r.objective <= max(float(np.sum(np.array(o)[:, None] * single.full_channel * D)) for o in priors) + 1e-9


# --- utilities -------------------------------------------------------------------------------

def test_value_based_distortions_scale_hamming_on_two_values():
    # with values (0, 2), |a_x - a_y| = 2 * 1[x != y] and (a_x - a_y)^2 = 4 * 1[x != y]
    base = dict(prior=[0.7, 0.3], privacy=[co.LIP(1.0)], values=[0, 2])
    ham = co.solve(co.Problem(utility=co.Distortion("hamming"), **base)).objective
    mae = co.solve(co.Problem(utility=co.Distortion("mae"), **base)).objective
    sq = co.solve(co.Problem(utility=co.Distortion("squared"), **base)).objective
    assert mae == pytest.approx(2 * ham) and sq == pytest.approx(4 * ham)


def test_one_distortion_object_across_problems_gives_each_its_own_matrix():
    """`matrix_for` keeps its last matrix: one utility object used with problems of other values,
    sizes and output values (in turn, and back) gives each the matrix written from its definition,
    read-only."""
    rng = np.random.default_rng(5)
    for kind in ("mae", "squared", "hamming"):
        u = co.Distortion(kind)
        cases = []
        for d, m in ((3, 3), (3, 3), (4, 4), (3, 5), (3, 5), (3, 3)):
            values = rng.integers(-3, 4, size=d).astype(float)
            out = None if m == d else rng.integers(-3, 4, size=m).astype(float)
            cases.append(co.Problem(prior=np.full(d, 1 / d), privacy=[co.LDP(1.0)], utility=u, values=values,
                                    output_size=m if m != d else None, output_values=out))
        for p in cases + cases[::-1]:
            a = p.values[:, None] - (p.values if p.output_values is None else p.output_values)[None, :]
            expected = {"mae": np.abs(a), "squared": a ** 2, "hamming": (np.arange(p.d)[:, None]
                                                                          != np.arange(p.m)[None, :]) * 1.0}[kind]
            D = u.matrix_for(p)
            assert np.array_equal(D, expected)
            with pytest.raises(ValueError):
                D[0, 0] = 7.0
    # a worker is sent the utility without the kept matrix, and writes its own
    p = co.Problem(prior=np.full(200, 1 / 200), privacy=[co.LDP(1.0)], utility=co.Distortion("mae"))
    D = p.utility.matrix_for(p)
    sent = pickle.dumps(p.utility)
    assert len(sent) < 1000 < D.nbytes
    assert np.array_equal(pickle.loads(sent).matrix_for(p), D)


def test_extra_outputs_cannot_lower_hamming():
    # outputs beyond the input alphabet are an error for every input
    base = dict(prior=[0.2, 0.3, 0.5], privacy=[co.LIP(0.7)], utility=co.Distortion("hamming"))
    assert co.solve(co.Problem(output_size=5, **base)).objective == pytest.approx(
        co.solve(co.Problem(**base)).objective, abs=1e-9)


def test_value_distortion_needs_output_values_when_sizes_differ():
    with pytest.raises(co.ProblemError, match="output.values is required"):
        co.Problem(prior=[0.5, 0.5], privacy=[co.LDP(1)], utility=co.Distortion("mae"), output_size=3)
    p = co.Problem(prior=[0.5, 0.5], privacy=[co.LDP(1)], utility=co.Distortion("mae"), output_size=3,
                   output_values=[0, 0.5, 1])
    assert co.solve(p).ok


def test_id_ldp_leakage_by_levels_equals_the_pairwise_definition():
    """With few budget levels the leakage is computed level by level (max minus min per level);
    against the definition written out pair by pair and output by output (ID-LDP Def 4), on
    random channels with zero entries, columns of zeros, singleton levels and every combine."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        d, m = int(rng.integers(2, 7)), int(rng.integers(1, 5))
        E = rng.choice([0.5, 1.0, 2.0][:int(rng.integers(1, 4))], size=d)
        n = co.IDLDP(epsilons=E, combine=str(rng.choice(["min", "avg", "max"])))
        q = rng.random((d, m))
        q[rng.random((d, m)) < 0.3] = 0.0
        if rng.random() < 0.2:
            q[:, 0] = 0.0
        R = n.pair_budgets()
        want = 0.0
        for x in range(d):
            for x2 in range(d):
                for y in range(m):
                    if x != x2 and not (q[x, y] == 0 and q[x2, y] == 0):
                        with np.errstate(divide="ignore"):
                            want = max(want, np.inf if q[x2, y] == 0 else np.log(q[x, y] / q[x2, y]) / R[x, x2])
        problem = co.Problem(prior=np.full(d, 1 / d), privacy=[n], utility=co.Distortion("hamming"))
        got = n.leakage(problem, q)
        assert got == want or abs(got - want) <= 1e-12 * max(1.0, abs(want))


@pytest.mark.parametrize("notion", [co.LIP(0.9), co.LDP(0.9)])
def test_batch_leakage_equals_the_per_channel_audit(notion):
    """The batch's vectorized leakage (extreme lifts / column spreads) against the notion's own
    leakage of each channel, on channels with zero entries, outputs no input takes, and entries
    that make the leakage infinite."""
    rng = np.random.default_rng(12)
    N, d, m = 300, 4, 5
    P = rng.dirichlet(np.ones(d), size=N)
    q = rng.dirichlet(np.ones(m), size=(N, d))
    q[rng.random((N, d, m)) < 0.15] = 0.0
    q[:40, :, 0] = 0.0                         # an output nobody takes
    q[:, :, 1] += 0.05                         # no all-zero row
    q /= q.sum(axis=2, keepdims=True)
    got = notion.batch_leakage(P, q)
    for i in range(N):
        problem = co.Problem(prior=P[i], privacy=[notion], utility=co.Distortion("hamming"))
        want = notion.leakage(problem, q[i])
        assert (np.isinf(got[i]) and np.isinf(want)) or got[i] == pytest.approx(want, abs=1e-12)
    assert np.isinf(got).any() and np.isfinite(got).any()
