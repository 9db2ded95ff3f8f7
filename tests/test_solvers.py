"""Cross-solver agreement, brute force on small cases, certificates, cleaning and re-audit."""

import itertools

import numpy as np
import pytest

import channelopt as co
from channelopt.methods.result import clean
from channelopt.solvers import BACKENDS
from conftest import PROBLEMS, JumpingClock, replace_backends

LP_SOLVERS = ["HIGHS", "HIGHS-IPM", "CLARABEL", "ECOS", "SCS"]
CONIC_SOLVERS = ["CLARABEL", "ECOS", "SCS"]
TOL = {"lp": 1e-6, "conic": 1e-4}


def linear_problems():
    out = []
    for path in PROBLEMS:
        p = co.load_problem(path)
        if all(n.linear_form for n in p.privacy):
            out.append(path)
    return out


@pytest.mark.parametrize("solver", LP_SOLVERS[1:])
@pytest.mark.parametrize("path", linear_problems(), ids=lambda p: p.stem)
def test_linear_problems_agree_across_solvers(path, solver):
    problem = co.load_problem(path)
    base = co.solve(problem, solver="HIGHS", fallback=False)
    other = co.solve(problem, solver=solver, fallback=False)
    assert base.ok and other.ok, other.message
    assert other.objective == pytest.approx(base.objective, rel=TOL["lp"], abs=TOL["lp"])


@pytest.mark.parametrize("solver", CONIC_SOLVERS)
def test_conic_problem_agrees_across_solvers(solver, problems_dir):
    problem = co.load_problem(problems_dir / "mip_binary.toml")
    r = co.solve(problem, solver=solver, fallback=False)
    assert r.status in ("optimal", "inaccurate")
    if r.ok:
        ref = co.solve(problem, solver="CLARABEL", fallback=False)
        assert r.objective == pytest.approx(ref.objective, rel=TOL["conic"], abs=TOL["conic"])


def test_lp_certificate_is_a_valid_lower_bound_and_tight():
    r = np.random.default_rng(3)
    for _ in range(5):
        d = 6
        P = r.dirichlet(np.ones(d))
        p = co.Problem(prior=P, privacy=[co.LIP(0.7)], utility=co.Distortion("distortion", matrix=r.random((d, d))))
        res = co.solve(p)
        c = res.certificate
        assert c["method"] == "lp-duality"
        assert c["lower_bound"] <= res.objective + 1e-12
        assert c["gap"] < 1e-8


# --- brute force --------------------------------------------------------------------------

def test_lip_binary_lp_matches_a_fine_grid():
    P1, eps = 0.3, 0.8
    p = co.Problem(prior=[1 - P1, P1], privacy=[co.LIP(eps)], utility=co.Distortion("mae", ), values=[0, 1])
    lp = co.solve(p).objective
    g = np.linspace(0, 1, 2001)
    a, b = np.meshgrid(g, g, indexing="ij")  # a = q[0,1], b = q[1,0]
    lam1 = (1 - P1) * a + P1 * (1 - b)
    lam0 = 1 - lam1
    e = np.exp(eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = np.ones_like(a, dtype=bool)
        for qx, lam in (((1 - a), lam0), (b, lam0), (a, lam1), ((1 - b), lam1)):
            ok &= (qx <= e * lam + 1e-15) & (lam <= e * qx + 1e-15)
    err = (1 - P1) * a + P1 * b
    best = err[ok].min()
    assert lp <= best + 1e-12          # the LP is a lower bound on every grid channel
    assert best - lp < 2e-3            # and the grid comes within its resolution


def test_pufferfish_lp_matches_a_fine_grid():
    # ternary X, binary secret, binary output: q[x, 0] on a grid of step 1/200
    pg = np.array([0.6, 0.4])
    T = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    eps = 0.5
    D = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])
    p = co.Problem(prior=pg @ T, latent={"prior": pg, "conditional": T}, privacy=[co.Pufferfish(eps)],
                   output_size=2, utility=co.Distortion("distortion", matrix=D))
    lp = co.solve(p).objective
    g = np.linspace(0, 1, 201)
    Q0 = np.array(list(itertools.product(g, repeat=3)))            # q[:, 0]
    Q = np.stack([Q0, 1 - Q0], axis=2)                               # n x 3 x 2
    cond = np.einsum("gx,nxy->ngy", T, Q)
    e = np.exp(eps)
    ok = np.all(cond[:, 0] <= e * cond[:, 1] + 1e-15, axis=1) & np.all(cond[:, 1] <= e * cond[:, 0] + 1e-15, axis=1)
    P = pg @ T
    cost = np.einsum("x,nxy,xy->n", P, Q, D)
    best = cost[ok].min()
    assert lp <= best + 1e-12
    assert best - lp < 5e-3


# --- cleaning never hides a violation ------------------------------------------------------

def test_cleaning_removes_noise_only():
    q = np.array([[0.6, 0.4 + 1e-12, -1e-13], [0.3, 0.7, 0.0]])
    c, why = clean(q)
    assert why == "" and c.min() >= 0 and np.allclose(c.sum(axis=1), 1, atol=1e-15)
    assert clean(np.array([[0.5, 0.5 + 1e-6], [0.5, 0.5]]))[0] is None
    assert clean(np.array([[1.0 + 1e-7, -1e-7], [0.5, 0.5]]))[0] is None


def test_perturbed_optimum_is_reported_not_returned_as_optimal(monkeypatch):
    import channelopt.methods as methods

    p = co.Problem(prior=[0.1, 0.2, 0.7], privacy=[co.LIP(1.0)], utility=co.Distortion("hamming"))
    real = dict(BACKENDS)

    def tampered(prog, problem, solver):
        raw = real[solver](prog, problem)
        z = raw.z.copy()
        q = prog.channel(z)
        bad = q.copy()
        bad[0] = [0.9, 0.05, 0.05]  # a real LIP violation, far above solver noise
        z[: q.size] += (bad - q).ravel()  # q = z[:dm] (+ a substituted floor): shift by the change
        assert np.allclose(prog.channel(z), bad)
        raw.z = z
        return raw

    replace_backends(monkeypatch, tampered)
    r = co.solve(p, closed_forms=False)         # (by default the reduced LP on the top outputs closes it)
    # every solver's channel violates LIP: each attempt says so, and what comes back is not
    # called optimal: the best feasible trivial channel, with the solvers' (valid) dual bound
    assert [a["solver"] for a in r.attempts] == list(methods.LP_ORDER)
    assert all(a["status"] == "inaccurate" and "lip (leakage" in a["message"] for a in r.attempts)
    assert r.status == "local" and r.solver == "trivial" and co.audit(p, r.channel).ok
    assert r.certificate.bound <= r.objective


# --- the restricted program (a few outputs, priced out exactly) ----------------------------------

def _restricted_case(notion, kind, d=64, seed=0):
    from channelopt import bench

    budgets = bench.instance("minid-ldp", d, seed).budgets
    privacy = {"lip": co.LIP(1.0), "lip-wide": co.LIP(3.0), "alip": co.ALIP(epsilon_lower=0.5, epsilon_upper=1.0),
               "ldp": co.LDP(1.0), "minid": co.IDLDP(epsilons=budgets), "lip-every": co.LIP(float(np.log(2 * d)))}[notion]
    prior = np.random.default_rng(seed).dirichlet(np.ones(d))
    return co.Problem(prior=prior, privacy=[privacy], utility=co.Distortion(kind))


@pytest.mark.parametrize("kind", ["hamming", "mae"])
@pytest.mark.parametrize("notion", ["lip", "lip-wide", "alip", "ldp", "minid", "lip-every"])
def test_restricted_program_equals_the_whole_program(notion, kind):
    """`solve_restricted` against the whole program solved directly (a second method): the same
    optimum, and its multipliers (0 on the rows it dropped) certify it on the whole program."""
    from channelopt.methods.lp import build, solve_highs, solve_restricted

    prog = build(_restricted_case(notion, kind))
    whole = solve_highs(prog, restrict=False)
    part = solve_restricted(prog)
    if part is None:                    # gave up: the default path then solves the whole program
        assert kind == "mae" or notion == "lip-wide"    # many outputs used: not the restricted case
        return
    value = prog.c @ part.z
    assert value == pytest.approx(prog.c @ whole.z, abs=1e-9)
    assert value - prog.dual_bound(part.y_ub, part.y_eq) <= 1e-9
    q = prog.channel(part.z)
    assert np.allclose(q.sum(axis=1), 1.0) and q.min() >= -1e-12
    assert np.all(prog.A_ub @ part.z <= prog.b_ub + 1e-9)


@pytest.mark.parametrize("notion", ["lip", "alip", "ldp", "minid"])
def test_the_pooled_floors_leave_the_optimum_and_thin_the_row_sums(notion):
    """`lp.pooled` writes each floor group's total as one column: the same optimum as the program
    `build` writes (both solved whole by HiGHS), with d * m fewer floor coefficients in the rows of
    q (MinID-LDP: three floor groups)."""
    from channelopt.methods.lp import build, pooled, solve_highs

    prog = build(_restricted_case(notion, "mae", d=24))
    wide = pooled(prog)
    groups = int(prog.floors[1].max()) + 1
    assert wide.n == prog.n + groups and wide.A_eq.shape[0] == prog.A_eq.shape[0] + groups
    assert wide.A_eq[:prog.d].nnz == prog.A_eq[:prog.d].nnz - prog.d * prog.m + prog.d
    a, b = solve_highs(prog, restrict=False), solve_highs(wide, restrict=False)
    assert wide.c @ b.z == pytest.approx(prog.c @ a.z, abs=1e-10)


def test_restricted_program_closes_where_every_output_is_used():
    """LIP at eps = ln(2d) with a Dirichlet(1) prior, d = 128: the Hamming optimum uses most
    outputs but few entries above their floors. Entries enter one by one and close on a fraction
    of the program; whole outputs (the other rule) reach the same optimum on more entries; both
    equal the whole program solved directly."""
    from channelopt.methods.lp import build, solve_highs, solve_restricted

    prog = build(_restricted_case("lip-every", "hamming", d=128))
    whole = prog.c @ solve_highs(prog, restrict=False).z
    by = {rule: solve_restricted(prog, enter=rule) for rule in ("entries", "outputs")}
    used = {}
    for rule, raw in by.items():
        assert raw is not None, rule
        assert prog.c @ raw.z == pytest.approx(whole, abs=1e-10)
        assert prog.c @ raw.z - prog.dual_bound(raw.y_ub, raw.y_eq) <= 1e-9
        used[rule] = int(raw.message.split("on ")[1].split(" of")[0].replace(",", ""))
    q = prog.channel(by["entries"].z)
    assert (q.sum(axis=0) > 1e-9).sum() > 100                  # most outputs used
    assert used["entries"] < used["outputs"] < 0.5 * 128 * 128


def test_restricted_program_out_of_time_returns_its_last_feasible_point(monkeypatch):
    """A clock that jumps past the time limit after the first round: the restricted program hands
    back that round's point, feasible for the whole program, with multipliers whose dual bound
    holds (checked against the whole program's optimum, solved directly), not None (which had
    left the frontend the trivial channel: LIP Hamming d = 512, eps = ln 2d, 1 s: loss 0.987
    against the optimum 0.026)."""
    from channelopt.methods import lp

    prog = lp.build(_restricted_case("lip-every", "hamming", d=96))
    best = prog.c @ lp.solve_highs(prog, restrict=False).z
    monkeypatch.setattr(lp, "time", JumpingClock())      # start, round 1 (9 s left), then out of time
    raw = lp.solve_restricted(prog, time_limit=10.0)
    assert raw is not None and raw.status == "time_limit" and "1 round" in raw.message
    assert np.all(prog.A_ub @ raw.z <= prog.b_ub + 1e-9) and np.allclose(prog.A_eq @ raw.z, prog.b_eq, atol=1e-9)
    assert prog.c @ raw.z >= best - 1e-12 and prog.c @ raw.z > best + 1e-6       # feasible, not yet optimal
    assert prog.dual_bound(raw.y_ub, raw.y_eq) <= best + 1e-12


def test_only_large_hamming_like_programs_are_restricted():
    """The default path tries the restricted program for Hamming-like costs (one cheaper output
    per input) on substituted programs of >= 4,096 entries, and never for MAE."""
    from channelopt.methods.lp import build, restrictable

    assert restrictable(build(_restricted_case("lip", "hamming")))
    assert restrictable(build(_restricted_case("minid", "hamming")))
    assert not restrictable(build(_restricted_case("lip", "mae")))
    assert not restrictable(build(_restricted_case("ldp", "squared")))
    assert not restrictable(build(_restricted_case("lip", "hamming", d=32)))           # 1,024 entries
    assert not restrictable(build(_restricted_case("lip", "hamming"), substitute=False))


def test_restricted_program_closes_hamming_on_few_entries_and_solve_says_so():
    """Hamming under LIP with RR-LIP infeasible uses few outputs: one round on a few percent of
    the entries, and the LP solve reports the restricted run in its attempts (the default solve
    takes the reduced LP on the top outputs first, `methods.top_outputs`)."""
    from channelopt.methods.lp import build, solve_restricted

    p = _restricted_case("lip", "hamming", d=128, seed=1)
    raw = solve_restricted(build(p))
    assert raw is not None and "1 round" in raw.message
    used = int(raw.message.split("on ")[1].split(" of")[0].replace(",", ""))
    assert used < 0.1 * 128 * 128
    r = co.solve(p, closed_forms=False)
    assert r.status == "optimal" and "channel entries" in r.attempts[0]["message"]
    assert co.solve(p).method == "top-outputs"


def test_restricted_program_adds_the_rows_it_dropped_when_they_bind(monkeypatch):
    """With half of MinID's binding level rows left out up front, some bind at the first
    restricted optimum; they are found violated, added, and the optimum is still the whole
    program's."""
    from channelopt.methods import lp

    prog = lp.build(_restricted_case("minid", "hamming"))
    real = lp._aux_rows_that_bind

    def half(prog, touches):
        keep = real(prog, touches)
        keep[np.flatnonzero(keep)[::2]] = False
        return keep

    monkeypatch.setattr(lp, "_aux_rows_that_bind", half)
    monkeypatch.setattr(lp, "RESTRICT_ROUNDS", 50)
    part = lp.solve_restricted(prog)
    assert part is not None and "1 round" not in part.message
    assert prog.c @ part.z == pytest.approx(prog.c @ lp.solve_highs(prog, restrict=False).z, abs=1e-9)


def test_restricted_program_adds_whole_outputs_until_it_closes():
    """LIP at eps = 3, d = 128: the Hamming optimum uses ~20 outputs, more than the 8 it starts
    with; outputs enter by reduced cost until the whole program's optimum is reached."""
    from channelopt.methods.lp import build, solve_highs, solve_restricted

    prog = build(_restricted_case("lip-wide", "hamming", d=128))
    part = solve_restricted(prog)
    assert part is not None and "1 round" not in part.message
    assert prog.c @ part.z == pytest.approx(prog.c @ solve_highs(prog, restrict=False).z, abs=1e-9)
    assert prog.c @ part.z - prog.dual_bound(part.y_ub, part.y_eq) <= 1e-9


@pytest.mark.parametrize("change", ["epsilon", "prior"])
def test_restricted_program_started_from_another_programs_columns(change):
    """A sweep or batch starts each restricted program from the previous point's columns, rows
    and basis (a program with another budget or prior): the optimum is still the whole
    program's, certified on the whole program."""
    from channelopt.methods.lp import build, solve_highs, solve_restricted

    first = _restricted_case("lip", "hamming", d=96, seed=2)
    if change == "epsilon":
        second = co.Problem(prior=first.prior, privacy=[co.LIP(2.2)], utility=first.utility)
    else:
        second = _restricted_case("lip", "hamming", d=96, seed=3)
    start = solve_restricted(build(first))
    assert start is not None
    prog = build(second)
    part = solve_restricted(prog, start=start.restricted)
    assert part is not None
    assert prog.c @ part.z == pytest.approx(prog.c @ solve_highs(prog, restrict=False).z, abs=1e-9)
    assert prog.c @ part.z - prog.dual_bound(part.y_ub, part.y_eq) <= 1e-9
    assert np.all(prog.A_ub @ part.z <= prog.b_ub + 1e-9)


def _floor_case(name, d=6):
    P = np.random.default_rng(7).dirichlet(np.ones(d))
    privacy = {"lip": [co.LIP(0.8)], "alip": [co.ALIP(epsilon_lower=0.4, epsilon_upper=1.1)], "ldp": [co.LDP(0.9)],
               "minid": [co.IDLDP(epsilons=[0.5, 0.5, 1.0, 1.0, 1.0, 2.0])], "lip+ldp": [co.LIP(0.8), co.LDP(1.5)]}[name]
    return co.Problem(prior=P, privacy=privacy, utility=co.Distortion("mae"))


@pytest.mark.parametrize("name", ["lip", "alip", "ldp", "minid", "lip+ldp"])
def test_substituted_program_is_the_change_of_variables_applied_to_the_whole_program(name):
    """`build` substitutes the floor entry by entry; against the algebra done with dense matrices
    on the unsubstituted program: with q = s + l, every row, the cost and the equalities are
    the old ones times M = I + scale * E, and the floor rows are gone."""
    from channelopt.methods.lp import build

    p = _floor_case(name)
    d, m = p.d, p.m
    nq = d * m
    raw, sub = build(p, substitute=False), build(p, substitute=True)
    block = p.privacy[0].linear(p)
    group = np.zeros(d, dtype=int) if block.floor_group is None else np.asarray(block.floor_group)
    M = np.eye(raw.n)
    for x in range(d):
        for y in range(m):
            M[x * m + y, nq + group[x] * m + y] += block.floor_scale
    keep = np.ones(raw.A_ub.shape[0], dtype=bool)
    keep[block.floor:block.floor + nq] = False
    assert np.allclose(sub.A_ub.toarray(), raw.A_ub.toarray()[keep] @ M, rtol=0, atol=1e-15)
    assert np.allclose(sub.A_eq.toarray(), raw.A_eq.toarray() @ M, rtol=0, atol=1e-15)
    assert np.allclose(sub.c, M.T @ raw.c, rtol=0, atol=1e-15)
    assert np.array_equal(sub.b_ub, raw.b_ub[keep]) and np.array_equal(sub.b_eq, raw.b_eq)
    assert np.allclose(sub.lift.toarray(), M[:nq], rtol=0, atol=0)
    # and the two programs have the same optimum
    from channelopt.methods.lp import solve_highs
    a, b = solve_highs(raw, restrict=False), solve_highs(sub, restrict=False)
    assert raw.c @ a.z == pytest.approx(sub.c @ b.z, abs=1e-10)


def test_a_model_highs_rejects_leaves_the_reused_instance_empty():
    """`lp.load_program` on a reused HiGHS instance (sweeps keep one): a program HiGHS refuses
    (here a matrix column past the last variable) must not leave the previous model in place to
    be solved and reported as this one's optimum."""
    import highspy
    import scipy.sparse as sp

    from channelopt.methods.lp import load_program, new_highs

    h = new_highs()
    load_program(h, np.ones(2), sp.csr_matrix((0, 2)), np.zeros(0), sp.csr_matrix(np.ones((1, 2))), np.ones(1),
                 np.zeros(2), np.ones(2))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    load_program(h, np.ones(2), sp.csr_matrix((0, 3)), np.zeros(0), sp.csr_matrix(np.ones((1, 3))), np.ones(1),
                 np.zeros(2), np.ones(2))
    h.run()
    assert h.getModelStatus() != highspy.HighsModelStatus.kOptimal and h.getNumCol() == 0


def test_programs_built_from_a_cached_plan_equal_scipys_substitution():
    """`lp.build` converts its triplets, the floor substitution included, through a cached plan
    (`lp._plan`): along an eps sweep (LIP and LDP: the floor substituted) each substituted program
    equals scipy's own algebra on the unsubstituted one, A_ub M with M = [lift; 0 I] (z_old =
    M z_new) and the floor rows (now -s <= 0) dropped, and the plan is reused."""
    import scipy.sparse as sp

    from channelopt.methods import lp

    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(12))
    lp._PATTERNS.clear()
    for n in (co.LIP, co.LDP):
        for eps in (0.5, 1.3, 2.9):
            p = co.Problem(prior=P, privacy=[n(eps)], utility=co.Distortion("hamming"))
            sub, full = lp.build(p), lp.build(p, substitute=False)
            nq, n_aux = sub.d * sub.m, sub.n - sub.d * sub.m
            M = sp.vstack([sub.lift, sp.hstack([sp.csr_matrix((n_aux, nq)), sp.identity(n_aux)])], format="csr")
            ref = sp.csr_matrix(full.A_ub @ M)
            ref.eliminate_zeros()
            first = np.minimum(ref.indptr[:-1], ref.nnz - 1)          # each row's first entry
            one = np.diff(ref.indptr) == 1
            floor = one & (ref.indices[first] < nq) & (ref.data[first] == -1)
            floor &= full.b_ub == 0
            assert floor.sum() == nq                                  # one floor row per entry of q
            ref_eq = sp.csr_matrix(full.A_eq @ M)
            ref_eq.eliminate_zeros()
            for mine, want in ((sub.A_ub, ref[~floor]), (sub.A_eq, ref_eq)):
                assert mine.shape == want.shape and mine.nnz == want.nnz
                assert abs(mine - want).max() <= 1e-15 * abs(want).max()
            assert np.array_equal(sub.b_ub, full.b_ub[~floor]) and np.array_equal(sub.b_eq, full.b_eq)
    assert len(lp._PATTERNS) <= lp.PATTERNS_KEPT
    lp.build(co.Problem(prior=P, privacy=[co.LDP(0.7)], utility=co.Distortion("hamming")))
    plans = [id(x[-1]) for x in lp._PATTERNS]
    lp.build(co.Problem(prior=P, privacy=[co.LDP(2.2)], utility=co.Distortion("hamming")))
    assert [id(x[-1]) for x in lp._PATTERNS] == plans           # another budget: the same plans, reused


def test_c_output_captures_what_c_code_writes_and_lets_nothing_through(capfd):
    import ctypes
    import os

    from channelopt.solvers import c_output

    libc = ctypes.CDLL(None)
    with c_output() as printed:
        os.write(1, b"fd one\n")
        os.write(2, b"fd two\n")
        libc.printf(b"buffered by libc\n")          # sits in the C stdio buffer until flushed
    with c_output(keep=False) as dropped:
        os.write(1, b"discarded\n")
    out, err = capfd.readouterr()
    assert "fd one" in printed[0] and "fd two" in printed[0] and "buffered by libc" in printed[0]
    assert dropped == [""]
    assert not any(s in out + err for s in ("fd one", "fd two", "buffered by libc", "discarded"))
    os.write(1, b"after\n")                          # the descriptors are restored
    assert "after" in capfd.readouterr().out


def _large_costs(scale: float) -> co.Problem:
    """A problem of the status fuzz (seed 0): squared distortion of values ~1e5 (costs ~4e9)
    under LIP and ALIP, with its values times `scale`."""
    P = np.array([0.14968354426453387, 0.006016667687151808, 0.08158303625556941, 0.0502890913262189,
                  0.10569091057663643, 0.18589911150132604, 0.006427102384772874, 0.10679199747112915,
                  0.2672177843527957, 0.04040075417986569])
    v = np.array([20587.836368744607, 41244.0837022832, 46913.21057275668, 73188.9272772495, 80770.1353335781,
                  96767.99510876412, 99533.89331232064, 118766.42722748271, 139276.80590188265, 166062.84594248803])
    return co.Problem(prior=P / P.sum(), values=scale * v, utility=co.Distortion("squared"),
                      privacy=[co.LIP(5.746763935962929), co.ALIP(epsilon_lower=0.35653075800581596,
                                                                  epsilon_upper=0.9434025623771625)])


@pytest.mark.parametrize("solver", ["HIGHS", "CLARABEL", "ECOS", "SCS"])
def test_large_costs_are_solved_on_a_scaled_objective(solver):
    """Before the costs were scaled, HiGHS stopped with "excessive dual values" (Not Set), Clarabel
    and ECOS at their iteration limits, and the result was the trivial channel. The privacy
    constraints do not involve the values, so the optimum scales with their square: the same
    problem with values / 1000 (costs ~4e3, not scaled) gives the truth."""
    r = co.solve(_large_costs(1.0), solver=solver)
    truth = co.solve(_large_costs(1e-3))
    assert truth.status == "optimal" and r.attempts[0]["status"] == "optimal"
    tol = 1e-9 if solver == "HIGHS" else 1e-6          # the conic solvers' own tolerance
    assert r.objective == pytest.approx(1e6 * truth.objective, rel=tol)
    if solver == "HIGHS":
        assert r.status == "optimal" and r.certificate.bound == pytest.approx(r.objective, rel=1e-9)


def _ldp_mae(d):
    P = np.random.default_rng(0).dirichlet(np.ones(d))
    return co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Distortion("mae"))


def test_a_simplex_stopped_by_its_time_limit_leaves_multipliers_that_bound_the_optimum():
    """HiGHS stopped short (LDP MAE, d = 128: 0.2 s to solve, 0.02 s given) still hands back its
    multipliers, and their dual bound is below the optimum (solved in full)."""
    from channelopt.methods import lp

    prog = lp.build(_ldp_mae(128))
    best = prog.c @ lp.solve_highs(prog).z
    raw = lp.solve_highs(prog, time_limit=0.02)
    assert raw.status == "failed" and "time limit" in raw.message.lower()
    assert raw.y_ub is not None and raw.y_eq is not None
    bound = prog.dual_bound(raw.y_ub, raw.y_eq)
    assert np.isfinite(bound) and bound <= best + 1e-9


def test_a_reused_highs_instance_reads_the_time_limit_from_now():
    """HiGHS's clock adds up over the runs of one instance: after 0.6 s of earlier solves, a limit
    of 0.5 s still lets a 0.2 s solve finish, and a later call without a limit has none."""
    from channelopt.methods import lp

    prog = lp.build(_ldp_mae(128))
    h = lp.new_highs()
    while h.getRunTime() < 0.6:
        assert lp.solve_highs(prog, highs=h).status == "optimal"
    assert lp.solve_highs(prog, highs=h, time_limit=0.5).status == "optimal"
    assert lp.solve_highs(prog, highs=h).status == "optimal"


def test_out_of_time_the_solve_returns_its_best_channel_with_the_best_valid_bound(monkeypatch):
    """The LP gets no answer in time: the result is the reduced LP's channel stopped after one
    round (`top_outputs`, its clock made to run out) with its bound, not the trivial channel with
    none; both against the whole LP's optimum (solved first, closed forms off). With no reduced
    LP and no merged problem (LDP, d = 96), the trivial channel comes back with the bound of
    HiGHS's multipliers or the distortion's own minimum, whichever is larger."""
    from channelopt.methods import top_outputs
    from channelopt.methods.lp import RawSolution

    P = np.random.default_rng(1).dirichlet(np.ones(96))
    p = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("squared"))
    best = co.solve(p, closed_forms=False)
    assert best.status == "optimal"
    monkeypatch.setattr(top_outputs, "time", JumpingClock())
    replace_backends(monkeypatch, lambda prog, prob, name: RawSolution("failed", None, None, None, "Time limit reached"))
    r = co.solve(p, time_limit=10.0)
    trivial = min(p.utility.evaluate(p, np.eye(96)[np.full(96, y)]) for y in range(96))
    assert r.status == "local" and r.method == "top-outputs" and co.audit(p, r.full_channel).ok
    assert r.objective == pytest.approx(p.utility.evaluate(p, r.full_channel), rel=1e-12)
    assert best.objective - 1e-9 * best.objective <= r.objective < trivial
    assert p.utility.floor(p) < r.certificate.bound <= best.objective * (1 + 1e-9)
    assert "stopped at the time limit" in r.message and "no solver certified" in r.message
    monkeypatch.undo()

    q = _ldp_mae(96)                    # (below `merged`'s sizes; its whole LP takes 0.1 s)
    optimum = co.solve(q).objective
    r = co.solve(q, time_limit=0.01)
    assert r.status == "local" and co.audit(q, r.full_channel).ok
    assert r.certificate.method in ("lp-duality", "distortion-minimum")
    assert q.utility.floor(q) <= r.certificate.bound <= optimum + 1e-9 <= r.objective + 2e-9
    assert r.certificate.gap == pytest.approx(r.objective - r.certificate.bound)
