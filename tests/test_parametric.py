"""Budget sweeps on the eps-free LP (`methods.parametric`): the model against the LP written pair
by pair, and sweeps through it against fresh solves."""

import dataclasses
import importlib

import numpy as np
import pytest

import channelopt as co
from channelopt.methods import parametric
from channelopt.methods.lp import RawSolution, build
from channelopt.methods.parametric import Parametric
from test_extremes import pairwise_lp


def problem(notion, d, m, seed, eps=1.0, kind="random"):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(d))
    utility = (co.Distortion("distortion", matrix=rng.random((d, m))) if kind == "random"
               else co.Distortion(kind))
    return co.Problem(prior=P, privacy=[co.LDP(eps) if notion == "ldp" else co.LIP(eps)], utility=utility,
                      output_size=m)


def at(template, eps):
    return dataclasses.replace(template, privacy=(template.privacy[0].with_budget(epsilon=eps),))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("notion", ["ldp", "lip"])
def test_one_model_across_budgets_meets_the_lp_written_pair_by_pair(notion, seed):
    """One model, its budget moved up and down: at every budget its optimum and its dual bound
    equal the optimum of the LP written pair by pair (scipy), and its channel passes the audit."""
    rng = np.random.default_rng(100 + seed)
    d, m = int(rng.integers(3, 9)), int(rng.integers(2, 9))
    template = problem(notion, d, m, seed)
    model = Parametric(template)
    for eps in rng.permutation([0.02, 0.3, 1.0, 2.5, 6.0, 8.0]):
        p = at(template, eps)
        prog, raw = model.solve(eps)
        assert raw.status == "optimal"
        truth = pairwise_lp(p, eps if notion == "lip" else np.full(d, eps))
        q = prog.channel(raw.z)
        assert co.audit(p, np.clip(q, 0, None) / np.clip(q, 0, None).sum(axis=1, keepdims=True)).ok
        assert p.utility.evaluate(p, q) == pytest.approx(truth, rel=1e-7, abs=1e-10)
        bound = prog.dual_bound(raw.y_ub, raw.y_eq)
        assert bound <= truth + 1e-9 * max(1.0, truth)
        assert bound == pytest.approx(truth, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("notion,m,kind", [("ldp", 24, "mae"), ("lip", 24, "squared"), ("ldp", 9, "random"),
                                           ("lip", 30, "random")])
def test_sweep_through_the_model_equals_fresh_solves(notion, m, kind):
    d = 24
    base = problem(notion, d, m, 5, kind=kind)
    eps = np.r_[np.linspace(0.1, 4.0, 12), 2.0, 0.5]           # back and forth
    results = co.sweep(base, epsilon=eps)
    messages = [r.attempts[0]["message"] for r in results]
    assert all(msg == "eps updated in the previous point's model" for msg in messages[1:]), messages
    for e, r in zip(eps, results):
        fresh = co.solve(at(base, e))
        assert r.status == fresh.status == "optimal"
        assert r.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)
        assert r.certificate.bound <= fresh.objective + 1e-9 * max(1.0, fresh.objective)
        assert r.leakage["ldp" if notion == "ldp" else "lip"] <= e * (1 + 1e-9)


def test_budgets_past_its_range_and_a_failed_point_take_the_rebuilt_program(monkeypatch):
    """LIP at 9 nats has 2 sinh eps > MAX_TOP: that point is built afresh; a point where the
    model's HiGHS fails is solved by `solve`; both equal fresh solves, and the model resumes."""
    base = problem("lip", 10, 10, 2, kind="mae")
    real = Parametric.solve
    calls = []

    def flaky(self, eps):
        calls.append(eps)
        if len(calls) == 3:
            return self.program, RawSolution("failed", None, None, None, "forced")
        return real(self, eps)

    monkeypatch.setattr(Parametric, "solve", flaky)
    eps = [1.0, 2.0, 3.0, 9.0, 4.0]
    results = co.sweep(base, epsilon=eps)
    assert calls == [1.0, 2.0, 3.0, 4.0]                 # 9 nats never reaches the model
    assert 2 * np.sinh(9.0) > parametric.MAX_TOP >= 2 * np.sinh(8.0)
    for e, r in zip(eps, results):
        fresh = co.solve(at(base, e))
        assert r.status == "optimal"
        assert r.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)


def test_prior_sweeps_and_other_problems_keep_the_rebuilt_program():
    rng = np.random.default_rng(4)
    priors = rng.dirichlet(np.ones(8), size=3)
    base = co.Problem(prior=priors[0], privacy=[co.LDP(1.0)], utility=co.Distortion("mae"))
    results = co.sweep(base, priors=priors)
    assert all("eps updated" not in r.attempts[0]["message"] for r in results)
    for p, r in zip(priors, results):
        fresh = co.solve(co.Problem(prior=p, privacy=base.privacy, utility=base.utility))
        assert r.objective == pytest.approx(fresh.objective, rel=1e-9)
    assert not Parametric.applies(co.Problem(prior=priors[0], privacy=[co.LDP(1.0), co.LIP(2.0)],
                                             utility=co.Distortion("mae")))
    assert not Parametric.applies(co.Problem(prior=priors[0], privacy=[co.LDP(1.0)], utility=co.Bayes("bayes-mse")))


def test_scale_sweeps_and_parallel_chunks_take_the_model_too(monkeypatch):
    """A `scale` sweep moves LDP's one budget like an eps sweep; with two jobs the worker walks
    its own model down from the last point while this process goes on up. Both equal fresh solves
    point by point."""
    import joblib.executor

    sweep_module = importlib.import_module("channelopt.sweep")     # (channelopt.sweep is the function)
    base = problem("ldp", 16, 16, 7, eps=0.8, kind="mae")
    factors = np.linspace(0.5, 3.0, 9)
    by_scale = co.sweep(base, scale=factors)
    assert all(r.attempts[0]["message"] == "eps updated in the previous point's model" for r in by_scale[1:])

    submitted = []
    real_executor = joblib.executor.get_memmapping_executor

    class Recording:
        def __init__(self, *a, **k):
            self.executor = real_executor(*a, **k)

        def submit(self, *a, **k):
            submitted.append(self.executor.submit(*a, **k))
            return submitted[-1]

    real_point = sweep_module.Along.point

    def point_after_the_worker(self, p):
        # this process's first point past the three timed ones waits until the worker has
        # returned the sweep's last point (its first chunk): the worker's share is then certain
        if submitted:
            submitted[0].result(timeout=120)
        return real_point(self, p)

    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_S", 0.0)        # start the workers whatever the work
    monkeypatch.setattr(sweep_module, "CHUNK_S", 0.0)               # one point a chunk
    monkeypatch.setattr(joblib.executor, "get_memmapping_executor", Recording)
    monkeypatch.setattr(sweep_module.Along, "point", point_after_the_worker)
    parallel = co.sweep(base, epsilon=0.8 * factors, n_jobs=2)
    assert len(submitted) == 5                                      # the chunks after this process's first
    warm = [r.attempts[0]["message"] == "eps updated in the previous point's model" for r in parallel]
    # the first point starts the model here; the last starts the worker's (cold); every other
    # point, here or in the worker, moves eps in a model already solved
    assert warm == [False] + [True] * 7 + [False]
    for s, a, b in zip(factors, by_scale, parallel):
        fresh = co.solve(at(base, 0.8 * s))
        assert a.status == b.status == "optimal"
        assert a.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)
        assert b.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)


def level_problem(seed, scale=1.0, utility=None, prior=None):
    """A MinID / ID-LDP problem on fewer budget levels than inputs: per-input budgets under a
    random combine rule, or pair budgets given by classes."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(4, 24))
    P = rng.dirichlet(np.ones(d))
    P = P if prior is None else prior
    K = int(rng.integers(2, 5))
    values = rng.uniform(0.3, 2.0, K)
    g = rng.integers(0, K, d)
    if seed % 3 == 2:                                   # pair budgets by classes
        RL = rng.uniform(0.3, 2.0, (K, K))
        RL = (RL + RL.T) / 2
        R = scale * RL[g[:, None], g[None, :]]
        np.fill_diagonal(R, 0.0)
        notion = co.IDLDP(pair_epsilons=R)
    else:
        notion = co.IDLDP(epsilons=scale * values[g], combine=("min", "avg", "max")[seed % 3])
    m = d if seed % 2 else d + 2
    if utility is None:
        utility = (co.Distortion("mae") if m == d else co.Distortion("distortion", matrix=rng.random((d, m))))
    return co.Problem(prior=P, privacy=[notion], utility=utility, output_size=m)


@pytest.mark.parametrize("seed", range(12))
def test_level_program_is_the_built_program_bit_for_bit(seed):
    """`LevelProgram.program` (the first program with its level coefficients replaced) against
    `lp.build` of each point: every array equal, exactly; and the transposes the dual bound uses,
    built once and changed with the program, equal to the built program's."""
    first = level_problem(seed)
    if first.privacy[0].levels is None:
        pytest.skip("every input its own level")
    model = parametric.LevelProgram(first, build(first))
    assert model.position is not None
    kept = []
    for s in (0.4, 1.0, 2.5, 7.0):
        p = level_problem(seed, s, first.utility, first.prior)
        assert model.takes(p)
        a, b = model.program(p), build(p)
        for name in ("A_ub", "A_eq", "lift"):
            A, B = getattr(a, name), getattr(b, name)
            assert A.shape == B.shape and np.array_equal(A.indptr, B.indptr)
            assert np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data)
        for name in ("c", "b_ub", "b_eq", "lb", "ub"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
        assert a.floors[0] == b.floors[0] and np.array_equal(a.floors[1], b.floors[1])
        AT_ub, AT_eq = a.transposes()
        assert (AT_ub != b.A_ub.T).nnz == 0 and (AT_eq != b.A_eq.T).nnz == 0
        kept.append(AT_ub)
    assert all(T is kept[0] for T in kept)


def test_level_program_declines_other_problems():
    first = level_problem(0)
    model = parametric.LevelProgram(first, build(first))
    d = first.d
    other_prior = dataclasses.replace(first, prior=np.roll(first.prior, 1))
    other_utility = dataclasses.replace(first, utility=co.Distortion("distortion", matrix=np.ones((d, first.m))))
    regrouped = dataclasses.replace(first, privacy=[co.IDLDP(epsilons=np.linspace(0.5, 1.0, d))])   # d levels
    two_levels = np.where(np.arange(d) < d // 2, 0.5, 1.0)
    moved = dataclasses.replace(first, privacy=[co.IDLDP(epsilons=two_levels)])   # other levels of inputs
    for p in (other_prior, other_utility, regrouped, moved):
        assert not model.takes(p)
    assert not parametric.LevelProgram.applies(dataclasses.replace(first, privacy=[co.LDP(1.0)]))


def test_minid_scale_sweep_builds_its_program_once(monkeypatch):
    """A scale sweep under MinID-LDP builds the first point's program and passes it to HiGHS once;
    after it, only the level coefficients change, in the program and in the model HiGHS holds.
    Every point equals a fresh solve."""
    sweep_module = importlib.import_module("channelopt.sweep")
    built, loaded = [], []
    real, real_load = sweep_module.build, sweep_module.solve_highs

    def counting(p):
        built.append(p)
        return real(p)

    def counting_load(prog, **kw):
        loaded.append(prog)
        return real_load(prog, **kw)

    monkeypatch.setattr(sweep_module, "build", counting)
    monkeypatch.setattr(sweep_module, "solve_highs", counting_load)
    rng = np.random.default_rng(3)
    d = 24
    P = rng.dirichlet(np.ones(d))
    E = np.where(rng.random(d) < 0.4, 0.5, 1.5)
    base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=E)], utility=co.Distortion("mae"))
    scales = np.linspace(0.5, 3.0, 7)
    results = co.sweep(base, scale=scales)
    assert len(built) == 1 and len(loaded) == 1
    assert all(r.status == "optimal" for r in results)
    assert all(r.attempts[0]["message"] == "level coefficients updated in the previous point's model"
               for r in results[1:])
    for s, r in zip(scales, results):
        fresh = co.solve(co.Problem(prior=P, privacy=[co.IDLDP(epsilons=s * E)], utility=base.utility))
        assert r.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)
        assert r.leakage == pytest.approx(fresh.leakage, rel=1e-9, abs=1e-12)


def test_many_levels_pass_the_model_again_few_change_it_in_place(monkeypatch):
    """`LevelProgram.rerun` only where its coefficients are a small share of the program's
    (`RERUN_SHARE`): with 6 levels at d = 12 (K^2 m = 432 of 1,584 nonzeros) every point passes
    the program to HiGHS, with 2 levels (48 of 816) only the first does; both sweeps equal fresh
    solves."""
    sweep_module = importlib.import_module("channelopt.sweep")
    loaded = []
    real_load = sweep_module.solve_highs

    def counting_load(prog, **kw):
        loaded.append(prog)
        return real_load(prog, **kw)

    monkeypatch.setattr(sweep_module, "solve_highs", counting_load)
    rng = np.random.default_rng(8)
    d = 12
    P = rng.dirichlet(np.ones(d))
    scales = np.linspace(0.5, 2.5, 5)
    for K, passes in ((6, len(scales)), (2, 1)):
        E = np.r_[np.linspace(0.5, 1.5, K), rng.choice(np.linspace(0.5, 1.5, K), size=d - K)]
        base = co.Problem(prior=P, privacy=[co.IDLDP(epsilons=E)], utility=co.Distortion("mae"))
        prog = build(base)
        share = K * K * d / (prog.A_ub.nnz + prog.A_eq.nnz)
        assert (share <= parametric.RERUN_SHARE) == (passes == 1)
        loaded.clear()
        results = co.sweep(base, scale=scales)
        assert len(loaded) == passes
        for s, r in zip(scales, results):
            fresh = co.solve(co.Problem(prior=P, privacy=[co.IDLDP(epsilons=s * E)], utility=base.utility))
            assert r.status == "optimal"
            assert r.objective == pytest.approx(fresh.objective, rel=1e-9, abs=1e-12)
