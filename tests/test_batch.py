"""Batch per-user solving, sweeps and the benchmark: checked against independent solves."""

import os

import numpy as np
import pytest

import channelopt as co
from channelopt import binary
from channelopt.batch import check_priors, solve_batch
from channelopt.cli import main

KINDS = ["bayes-mse", "histogram-mse", "mutual-information", "map"]


def template(notion, d, kind="bayes-mse", eps=1.0):
    n = co.LIP(eps) if notion == "lip" else co.LDP(eps)
    return co.Problem(prior=np.full(d, 1 / d), privacy=[n], utility=co.Bayes(kind))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("notion", ["lip", "ldp"])
def test_batch_matches_per_user_certified_solve(notion, kind):
    rng = np.random.default_rng(10 * KINDS.index(kind) + (notion == "lip"))
    d = 4
    P = np.vstack([rng.dirichlet(np.ones(d), size=150), rng.dirichlet(0.2 * np.ones(d), size=50)])
    tpl = template(notion, d, kind, eps=float(rng.uniform(0.3, 2.0)))
    res = solve_batch(P, tpl, chunk_size=64)
    a = res.arrays
    assert res.counts["optimal"] == len(P)
    assert res.methods["critical-region"] > 0.5 * len(P)  # the rest: solve, also certified
    for i in range(0, len(P), 9):
        ref = co.solve(co.Problem(prior=P[i], privacy=tpl.privacy, utility=tpl.utility))
        assert ref.ok
        assert a["objective"][i] == pytest.approx(ref.objective, abs=1e-8)
        # the returned channel, audited by the library's own audit (not the batch's vectorized one)
        audit = co.audit(co.Problem(prior=P[i], privacy=tpl.privacy, utility=tpl.utility), a["channel"][i])
        assert all(audit.satisfied.values())
        assert a["leakage"][i, 0] == pytest.approx(list(audit.leakage.values())[0], abs=1e-9)


@pytest.mark.parametrize("notion", ["lip", "ldp"])
def test_batch_with_fewer_outputs_than_inputs(notion):
    """m = 2 < d = 4: a basis may put weight on more outputs than the template has; a user is
    certified by the critical-region test only when its channel uses at most m outputs, and then
    (the dual bound holds for every channel) its objective is the unrestricted optimum that
    `solve` certifies with m = d. Every other user keeps `solve`'s own answer with m = 2, never
    better than the unrestricted optimum."""
    rng = np.random.default_rng(21)
    d, m = 4, 2
    P = rng.dirichlet(0.3 * np.ones(d), size=30) if notion == "lip" else rng.dirichlet(np.ones(d), size=60)
    n = co.LIP(0.3) if notion == "lip" else co.LDP(0.5)
    tpl = co.Problem(prior=np.full(d, 1 / d), privacy=[n], utility=co.Bayes("bayes-mse"), output_size=m)
    res = solve_batch(P, tpl, chunk_size=30)
    a = res.arrays
    assert a["channel"].shape == (len(P), d, m)
    region = np.flatnonzero(a["method"] == 0)
    assert region.size > 0
    for i in range(len(P)):
        free = co.solve(co.Problem(prior=P[i], privacy=[n], utility=co.Bayes("bayes-mse")))
        assert free.ok
        if i in region:
            assert a["objective"][i] == pytest.approx(free.objective, abs=1e-9)
        else:
            assert a["objective"][i] >= free.objective - 1e-9
        p = co.Problem(prior=P[i], privacy=[n], utility=co.Bayes("bayes-mse"), output_size=m)
        assert all(co.audit(p, a["channel"][i]).satisfied.values())
    if notion == "ldp":                     # every user certified, by one method or the other
        assert res.counts["optimal"] == len(P)


def test_batch_rechecks_each_channel_against_its_certificate(monkeypatch):
    """A region test that hands back channels other than the ones it certified (a fault injected
    here: the constant channel, private and row-stochastic but far from optimal) must not produce
    `optimal` results: each channel's own gain is checked against its certified bound, and the
    users that fail go to `solve`."""
    import channelopt.batch as B

    real = B.region_test_rows

    def scrambled(rows, T, X, Phi, m):
        pos, C, g, b = real(rows, T, X, Phi, m)
        C = np.zeros_like(C)
        C[:, 0, :] = 1.0                            # q[x, 0] = 1 for every x
        return pos, C, g, b

    monkeypatch.setattr(B, "_POOLS", {})
    monkeypatch.setattr(B, "region_test_rows", scrambled)
    tpl = template("lip", 4)
    P = np.random.default_rng(14).dirichlet(np.ones(4), size=60)
    res = solve_batch(P, tpl, chunk_size=30)
    assert res.methods["solve"] > 30
    for i in range(0, 60, 6):
        ref = co.solve(co.Problem(prior=P[i], privacy=tpl.privacy, utility=tpl.utility))
        assert res.arrays["objective"][i] == pytest.approx(ref.objective, abs=1e-8)


def test_routes_rank_each_keys_entries_by_its_own_hits_and_register_only_credited_keys():
    from channelopt.batch import Routes

    r = Routes()
    assert r.key_ids([b"a", b"b"]).tolist() == [-1, -1] and not r.ids      # looking up registers nothing
    r.credit([b"a", b"b"], np.array([5, 1]), entry=0)
    r.credit([b"a"], np.array([7]), entry=3)
    r.credit([b"b"], np.array([2]), entry=3)
    r.credit([b"a"], np.array([1]), entry=0)                                 # an existing pair grows
    ids = r.key_ids([b"a", b"b", b"c"])
    assert ids[2] == -1 and len(r.ids) == 2
    R = r.ranked(ids[:2], 3)
    assert r.entry[R[0, :2]].tolist() == [3, 0] and r.hits[R[0, :2]].tolist() == [7, 6] and R[0, 2] == -1
    assert r.entry[R[1, :2]].tolist() == [3, 0] and r.hits[R[1, :2]].tolist() == [2, 1]
    R1 = r.ranked(ids[1:2], 1)                                               # one key, its best entry only
    assert R1.shape == (1, 1) and r.entry[R1[0, 0]] == 3


def test_region_test_in_place_equals_gathered_rows(monkeypatch):
    """The region test over (nearly) every user of a chunk works in place; it certifies the
    same users with the same channels and bounds as the test on gathered rows."""
    import channelopt.batch as B

    tpl = template("lip", 4)
    P = np.random.default_rng(13).dirichlet(np.ones(4), size=600)
    B.process_chunk(tpl, P[:300])                   # a pool of bases
    pool, _ = B._pool_for(tpl)
    X = B.candidate_vertices(tpl.privacy[0], P[300:])
    Phi = B.phi_vertices(tpl, X, P[300:])
    Phi[~X.valid] = -np.inf
    before = Phi.copy()
    bases = np.array([it[0] for it in pool])
    rows = np.flatnonzero(np.random.default_rng(1).random(300) < 0.9)
    # each user's basis: a random one among the pool's bases whose patterns are its vertices
    fits = X.valid[rows[:, None, None], bases[None]].all(axis=2)          # (users, bases)
    pick = np.argmax(fits * np.random.default_rng(2).random(fits.shape), axis=1)
    rows, T = rows[fits.any(axis=1)], bases[pick[fits.any(axis=1)]]
    assert rows.size >= B.DENSE_SHARE * 300                        # the in-place path is taken
    dense = B.region_test_rows(rows, T, X, Phi, 4)
    monkeypatch.setattr(B, "DENSE_SHARE", 2.0)
    gathered = B.region_test_rows(rows, T, X, Phi, 4)
    np.testing.assert_array_equal(Phi, before)                     # the inputs are left as they were
    assert dense[0].size > 0
    for a, b in zip(dense, gathered):
        np.testing.assert_array_equal(a, b)
    # each certified gain is the gain of the channel returned for that user, computed from q
    pos, C, gain, bound = dense
    users = P[300:][rows[pos]]
    obj = tpl.utility.from_gain(tpl, B.gain_batch(tpl, users, np.swapaxes(C, 1, 2)), prior=users)
    np.testing.assert_allclose(obj, tpl.utility.from_gain(tpl, gain, prior=users), atol=1e-12)
    assert np.all(bound >= gain - 1e-12)


@pytest.mark.parametrize("notion", ["lip", "ldp"])
def test_batch_binary_equals_closed_form(notion):
    """d = 2: the docs/spec.md §4 closed form P1(1-P1) - (P1-lo)(hi-P1), vectorized in `binary`."""
    P1 = np.random.default_rng(5).uniform(0.01, 0.99, size=500)
    eps = 0.8
    res = solve_batch(np.c_[1 - P1, P1], template(notion, 2, eps=eps))
    mse, _ = binary.optimum(notion, P1, eps)
    np.testing.assert_allclose(res.arrays["objective"], mse, atol=1e-10)


def test_batch_mmse_against_monte_carlo():
    """Simulate users through their channels; the curator's MMSE estimate's squared error."""
    rng = np.random.default_rng(11)
    P = rng.dirichlet(np.ones(3), size=4)
    res = solve_batch(P, template("lip", 3))
    for p, q, mse in zip(P, res.arrays["channel"], res.arrays["objective"]):
        n = 400_000
        x = rng.choice(3, size=n, p=p)
        u = rng.random(n)
        y = (u[:, None] > np.cumsum(q[x], axis=1)).sum(axis=1)
        y = np.minimum(y, q.shape[1] - 1)
        joint = p[:, None] * q
        est = (np.arange(3) @ joint) / np.where(joint.sum(0) > 0, joint.sum(0), 1)
        assert np.mean((est[y] - x) ** 2) == pytest.approx(mse, abs=4e-3)


def test_batch_generic_path_and_streamed_file(tmp_path):
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(3), size=12)
    tpl = co.Problem(prior=np.full(3, 1 / 3), privacy=[co.LIP(0.9)], utility=co.Distortion("hamming"))
    out = tmp_path / "r.npz"
    res = solve_batch(P, tpl, out=out, chunk_size=5)
    assert res.methods["solve"] == 12 and res.counts["optimal"] == 12
    z = np.load(out)
    for i in range(12):
        ref = co.solve(co.Problem(prior=P[i], privacy=tpl.privacy, utility=tpl.utility))
        assert z["objective"][i] == pytest.approx(ref.objective, abs=1e-9)
        assert z["bound"][i] <= z["objective"][i] + 1e-9
    assert list(z["status_names"][z["status"]]) == ["optimal"] * 12
    mem = solve_batch(P, tpl, chunk_size=5).arrays          # the same arrays, kept in memory
    for name in ("channel", "objective", "bound", "status", "method", "leakage"):
        np.testing.assert_array_equal(z[name], mem[name])
    assert sorted(os.listdir(tmp_path)) == ["r.npz"]  # no temporary left behind


def test_batch_interrupted_leaves_no_file(tmp_path, monkeypatch):
    """A failure after the first chunk was written: neither the output nor a temporary remains
    (and an output of the same name from before is left as it was)."""
    import channelopt.batch as B

    P = np.random.default_rng(3).dirichlet(np.ones(3), size=40)
    out = tmp_path / "r.npz"
    out.write_bytes(b"before")
    real, calls = B.process_chunk, []

    def failing(template, part):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(template, part)

    monkeypatch.setattr(B, "process_chunk", failing)
    with pytest.raises(KeyboardInterrupt):
        solve_batch(P, template("lip", 3), out=out, chunk_size=10)
    assert sorted(os.listdir(tmp_path)) == ["r.npz"] and out.read_bytes() == b"before"


def test_batch_parallel_equals_serial(tmp_path):
    P = np.random.default_rng(3).dirichlet(np.ones(4), size=600)
    tpl = template("lip", 4, "histogram-mse")
    a = solve_batch(P, tpl, chunk_size=100)
    b = solve_batch(P, tpl, chunk_size=100, n_jobs=2, out=tmp_path / "p.npz")
    np.testing.assert_allclose(np.load(tmp_path / "p.npz")["objective"], a.arrays["objective"], atol=1e-12)


def test_batch_on_a_local_dask_cluster(tmp_path):
    joblib = pytest.importorskip("joblib")
    distributed = pytest.importorskip("dask.distributed")
    P = np.random.default_rng(4).dirichlet(np.ones(3), size=400)
    tpl = template("ldp", 3, "mutual-information")
    serial = solve_batch(P, tpl)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            res = solve_batch(P, tpl, n_jobs=-1, chunk_size=100, out=tmp_path / "d.npz")
    assert res.counts["optimal"] == 400
    np.testing.assert_allclose(np.load(tmp_path / "d.npz")["objective"], serial.arrays["objective"], atol=1e-12)


@pytest.mark.parametrize("rows, needle", [
    ([[0.5, 0.5, 0.0]], "row 1: entries must be > 0"),
    ([[0.2, 0.3, 0.5], [0.2, 0.3, 0.4]], "row 2: entries must sum to 1"),
    ([[0.2, 0.8]], "rows must have 3 entries"),
    ([[0.2, np.nan, 0.8]], "row 1: entries must be finite"),
])
def test_bad_priors_name_the_row(rows, needle):
    with pytest.raises(co.ProblemError, match=needle):
        check_priors(np.array(rows), 3)


def test_batch_bad_arguments_fail_before_solving(tmp_path):
    P = np.full((3, 3), 1 / 3)
    tpl = template("lip", 3)
    for kw in ({"n_jobs": 0}, {"n_jobs": -3}, {"chunk_size": 0}, {"out": tmp_path / "f" / "x.npz"}):
        if "out" in kw:
            (tmp_path / "f").write_text("a file, not a directory")
        with pytest.raises(co.ProblemError):
            solve_batch(P, tpl, **kw)


def test_cli_batch(tmp_path, problems_dir, capsys):
    P = np.random.default_rng(6).dirichlet(np.ones(2), size=30)   # the problem is binary
    csv = tmp_path / "priors.csv"
    np.savetxt(csv, P, delimiter=",", fmt="%.17g")
    out = tmp_path / "res.npz"
    assert main(["batch", str(problems_dir / "lip_cns_example1_mse.toml"), "--priors", str(csv), "--out", str(out)]) == 0
    assert np.load(out)["channel"].shape[0] == 30
    bad = tmp_path / "bad.csv"
    bad.write_text("0.2,0.8\n0.2,0.3,0.5\n")
    capsys.readouterr()
    assert main(["batch", str(problems_dir / "lip_cns_example1_mse.toml"), "--priors", str(bad),
                 "--out", str(tmp_path / "no.npz")]) == 2
    err = capsys.readouterr().err
    assert "row 2" in err and err.count("\n") == 1
    assert not (tmp_path / "no.npz").exists()


# --- sweeps ------------------------------------------------------------------------------------

@pytest.mark.parametrize("notion", ["ldp", "lip", "pufferfish"])
def test_eps_sweep_equals_fresh_solves(notion):
    rng = np.random.default_rng(8)
    d = 6
    P = rng.dirichlet(np.ones(d))
    D = rng.random((d, d))
    mk = {"ldp": co.LDP, "lip": co.LIP, "pufferfish": co.Pufferfish}[notion]
    base = co.Problem(prior=P, privacy=[mk(1.0)], utility=co.Distortion("distortion", matrix=D))
    eps = np.linspace(0.2, 3.0, 15)
    results = co.sweep(base, epsilon=eps)
    assert all(r.ok for r in results)
    assert sum(bool(r.timings.get("warm")) for r in results) == len(eps) - 1
    for e, r in zip(eps, results):
        fresh = co.solve(co.Problem(prior=P, privacy=[mk(e)], utility=base.utility))
        assert r.objective == pytest.approx(fresh.objective, abs=1e-9)
        assert r.leakage == pytest.approx(fresh.leakage, abs=1e-7)
        assert r.certificate["gap"] < 1e-8


def test_hamming_sweep_takes_the_restricted_program_while_it_closes(monkeypatch):
    """LIP Hamming at d = 64 along eps, with the reduced LP on the top outputs turned off: the
    restricted program (`lp.solve_restricted`) solves the points where the optimum uses few
    outputs; the sweep equals fresh solves at every point."""
    from channelopt.methods import top_outputs

    monkeypatch.setattr(top_outputs, "applies", lambda problem, along=False: False)
    P = np.random.default_rng(3).dirichlet(np.ones(64))
    base = co.Problem(prior=P, privacy=[co.LIP(1.0)], utility=co.Distortion("hamming"))
    eps = [0.3, 0.6, 1.0, 2.0, 3.0]
    results = co.sweep(base, epsilon=eps)
    assert all(r.status == "optimal" for r in results)
    assert "channel entries" in results[0].attempts[0]["message"]
    for e, r in zip(eps, results):
        fresh = co.solve(co.Problem(prior=P, privacy=[co.LIP(e)], utility=base.utility))
        assert r.objective == pytest.approx(fresh.objective, abs=1e-9)


def test_prior_sweep_and_parallel_sweep():
    rng = np.random.default_rng(9)
    priors = rng.dirichlet(np.ones(4), size=6)
    base = co.Problem(prior=priors[0], privacy=[co.LIP(0.7)], utility=co.Distortion("hamming"))
    serial = co.sweep(base, priors=priors)
    par = co.sweep(base, priors=priors, n_jobs=2)
    for p, a, b in zip(priors, serial, par):
        fresh = co.solve(co.Problem(prior=p, privacy=base.privacy, utility=base.utility))
        assert a.objective == pytest.approx(fresh.objective, abs=1e-9)
        assert b.objective == pytest.approx(fresh.objective, abs=1e-9)


def test_bayes_sweep_solves_each_point():
    base = template("lip", 3)
    res = co.sweep(base, epsilon=[0.5, 1.0])
    assert [r.method for r in res] == ["posterior-lp"] * 2
    assert res[0].objective > res[1].objective  # more budget, smaller MSE


@pytest.mark.parametrize("notions", ["minid", "pairs+lip"])
def test_scale_sweep_equals_fresh_solves_with_scaled_budgets(notions):
    """scale=[...] multiplies every budget: per-input MinID-LDP budgets (the sweep that eps=[...]
    cannot express), per-pair ID-LDP budgets, and a second notion's scalar budget; each point
    equals a fresh solve of the problem written with the scaled budgets."""
    rng = np.random.default_rng(4)
    d = 40
    P = rng.dirichlet(np.ones(d))
    E = np.where(rng.random(d) < 0.3, 0.6, 1.2)
    if notions == "minid":
        def privacy(s):
            return [co.IDLDP(epsilons=s * E)]
        d_use = d
    else:
        d_use = 6
        P = rng.dirichlet(np.ones(d_use))
        R = np.full((d_use, d_use), 1.5)
        R[0, 1] = R[1, 0] = 0.4
        np.fill_diagonal(R, 0.0)

        def privacy(s):
            return [co.IDLDP(pair_epsilons=s * R), co.LIP(s * 2.0)]
    util = co.Distortion("mae")
    base = co.Problem(prior=P, privacy=privacy(1.0), utility=util)
    scales = [0.5, 0.8, 1.0, 1.7]
    results = co.sweep(base, scale=scales)
    assert results.param == "scale" and results.values == scales
    assert all(r.status == "optimal" for r in results)
    for s, r in zip(scales, results):
        fresh = co.solve(co.Problem(prior=P[:d_use], privacy=privacy(s), utility=util))
        assert r.objective == pytest.approx(fresh.objective, abs=1e-9)
    assert results.rows()[3]["scale"] == 1.7


@pytest.mark.parametrize("kw, needle", [
    ({"scale": [1.0, 0.0]}, r"scale\[1\] must be a finite number > 0"),
    ({"scale": [1e3]}, r"scale\[0\] = 1000: epsilon must be at most 700"),
    ({"scale": [1.0], "epsilon": [1.0]}, "exactly one"),
    ({"epsilon": []}, "non-empty"),
    ({"priors": []}, "non-empty"),
    ({"epsilon": [1.0, -1.0]}, r"epsilon\[1\]"),
    ({"epsilon": [1.0], "n_jobs": 0}, "n_jobs"),
    ({}, "exactly one"),
    ({"priors": [[0.5, 0.6, 0.1]]}, r"priors\[0\]"),
])
def test_sweep_bad_input(kw, needle):
    base = co.Problem(prior=[0.2, 0.3, 0.5], privacy=[co.LIP(1.0)], utility=co.Distortion("hamming"))
    with pytest.raises(co.ProblemError, match=needle):
        co.sweep(base, **kw)


def test_with_privacy_is_replace_without_revalidating_the_rest():
    """`Problem.with_privacy` (a sweep's points) gives the problem `dataclasses.replace` builds,
    field by field (labels, latent secret, output values kept), leaves the template alone, and
    rejects a notion that does not fit the problem with replace's own message."""
    import dataclasses

    rng = np.random.default_rng(5)
    joint = {"prior": [0.4, 0.6], "conditional": rng.dirichlet(np.ones(4), size=2)}
    base = co.Problem(prior=np.array(joint["prior"]) @ joint["conditional"], latent=joint, labels=list("abcd"),
                      values=[1.0, 2.0, 4.0, 8.0], output_size=3, output_values=[1.0, 3.0, 8.0],
                      privacy=[co.LIP(1.0)], utility=co.Distortion("mae"))
    for privacy in ([co.LIP(0.3)], [co.LDP(2.0), co.LIP(0.5)], [co.IDLDP(epsilons=[0.5, 1.0, 1.5, 2.0])]):
        fast, slow = base.with_privacy(privacy), dataclasses.replace(base, privacy=privacy)
        assert fast.privacy == slow.privacy and fast.privacy is not base.privacy
        for f in dataclasses.fields(co.Problem):
            a, b = getattr(fast, f.name), getattr(slow, f.name)
            if f.name == "latent":
                assert np.array_equal(a.prior, b.prior) and np.array_equal(a.conditional, b.conditional)
            elif f.name != "privacy":
                assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, f.name
    assert base.privacy == (co.LIP(1.0),)
    wrong = [co.IDLDP(epsilons=[0.5, 1.0])]                    # 2 budgets for 4 inputs
    with pytest.raises(co.ProblemError) as slow_error:
        dataclasses.replace(base, privacy=wrong)
    with pytest.raises(co.ProblemError) as fast_error:
        base.with_privacy(wrong)
    assert str(fast_error.value) == str(slow_error.value) and "privacy[0]" in str(fast_error.value)


def test_cli_sweep_writes_csv(tmp_path, problems_dir):
    out = tmp_path / "s.csv"
    assert main(["sweep", str(problems_dir / "lip_tdsc_3symbol.toml"), "--epsilon", "0.5:2:4", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 5 and lines[0].startswith("point,epsilon,status,objective")
    assert main(["sweep", str(problems_dir / "lip_tdsc_3symbol.toml"), "--epsilon", "a,b"]) == 2
    assert main(["sweep", str(problems_dir / "idldp_toy.toml"), "--scale", "0.5:2:3", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 4 and lines[0].startswith("point,scale,status,objective")
    assert main(["sweep", str(problems_dir / "idldp_toy.toml"), "--scale", "-1"]) == 2


# --- benchmark -----------------------------------------------------------------------------------

def test_bench_rows_agree_across_solvers(tmp_path):
    from channelopt import bench

    rows = bench.run(notions=("ldp", "lip-latent", "bp-lip"), utilities=("hamming", "bayes-mse"), sizes=(4,),
                     solvers=("auto", "HIGHS", "CLARABEL"), baselines=bench.BASELINES, cap=30)
    ham = [r for r in rows if r["utility"] == "hamming"]
    assert {r["solver"] for r in ham} == {"auto", "HIGHS", "CLARABEL", *bench.BASELINES}
    assert all(r["status"] == "optimal" for r in rows), [r for r in rows if r["status"] != "optimal"]
    assert max(r["rel_diff"] for r in ham) < 1e-6
    paths = bench.write(rows, tmp_path)
    assert all(p.stat().st_size > 0 for p in paths)
    back = bench.read_csv(paths[0])
    assert len(back) == len(rows)


def test_cli_bench_bad_input(tmp_path, capsys):
    assert main(["bench", "--notions", "ldp,nope", "--out", str(tmp_path)]) == 2
    assert main(["bench", "--sizes", "4,x", "--out", str(tmp_path)]) == 2
    assert main(["bench", "--cap", "-1", "--out", str(tmp_path)]) == 2
    assert "--cap" in capsys.readouterr().err


def test_routing_gives_the_optima_of_testing_every_region(monkeypatch):
    """The vectorized routing step (each user tested against its key's entries only) certifies
    the same optima as scanning the whole pool for every user; and it does certify users."""
    import channelopt.batch as B

    tpl = co.Problem(prior=np.full(4, 0.25), privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))
    P = np.random.default_rng(11).dirichlet(np.ones(4), size=3000)
    monkeypatch.setattr(B, "_POOLS", {})
    routed = [B.process_chunk(tpl, P[i:i + 500]) for i in range(0, 3000, 500)]
    monkeypatch.setattr(B, "_POOLS", {})
    monkeypatch.setattr(B, "ROUTE_TRIES", 0)
    scanned = [B.process_chunk(tpl, P[i:i + 500]) for i in range(0, 3000, 500)]
    for a, b in zip(routed, scanned):
        assert (a["status"] == 0).all() and (b["status"] == 0).all()
        np.testing.assert_allclose(a["objective"], b["objective"], rtol=1e-10, atol=1e-13)
        assert (a["leakage"] <= 1.0 + 1e-9).all()


def test_routing_certifies_most_users_after_the_first_chunk(monkeypatch):
    import channelopt.batch as B

    tpl = co.Problem(prior=np.full(4, 0.25), privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))
    P = np.random.default_rng(12).dirichlet(np.ones(4), size=4000)
    monkeypatch.setattr(B, "_POOLS", {})
    B.process_chunk(tpl, P[:2000])
    calls = []
    real = B.region_test_rows
    monkeypatch.setattr(B, "region_test_rows", lambda rows, *a: calls.append(rows.size) or real(rows, *a))
    out = B.process_chunk(tpl, P[2000:])
    assert (out["status"] == 0).all()
    # routing: a handful of batched calls over (nearly) all users, not one call per pool entry
    assert len(calls) < 40 and sum(calls) >= 2000


@pytest.mark.parametrize("notion", [co.LIP(0.7), co.LDP(0.7)])
def test_factored_vertices_are_each_priors_vertices(notion):
    """`BatchVertices` (never materialized in the batch) against each prior's own closed-form
    vertex set (`posterior_vertices`, one problem at a time), and its products against the full
    array."""
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(4) * 0.5, size=6)
    X = notion.batch_vertices(P, 10_000)
    U = X.full(np.arange(len(P)))
    for n in range(len(P)):
        p = co.Problem(prior=P[n], privacy=[notion], utility=co.Bayes("map"))
        own = notion.posterior_vertices(p, 10_000) / P[n]
        mine = U[n][X.valid[n]]
        assert np.allclose(mine @ P[n], 1.0)
        key = lambda A: {tuple(r) for r in np.round(A, 9)}           # noqa: E731
        assert key(mine) == key(own)
    c = rng.normal(size=P.shape)
    assert np.allclose(X.dot(c), np.einsum("nvd,nd->nv", U, c))
    rows, idx = np.array([[0], [3], [5]]), np.array([[1, 2], [0, 7], [4, 4]])
    assert np.array_equal(X.take(rows, idx), U[rows, idx])


def test_batch_stores_each_channel_with_its_outputs_in_place():
    """LDP Hamming's optimum is subset randomized response over the most probable symbols: for the
    first user only outputs 2 and 3 are used. `solve` drops the unused outputs from
    `Result.channel`; the batch stored that from column 0, relabelling the outputs (its own Hamming
    distortion 0.95 against the certified 0.342). Each stored channel's distortion, computed here
    from its diagonal, must be its objective."""
    tpl = co.Problem(prior=np.full(4, 0.25), privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    P = np.array([[0.05, 0.05, 0.45, 0.45], [0.4, 0.3, 0.2, 0.1], [0.1, 0.6, 0.1, 0.2]])
    a = solve_batch(P, tpl).arrays
    for i, p in enumerate(P):
        q = a["channel"][i]
        assert 1.0 - float(p @ np.diag(q)) == pytest.approx(a["objective"][i], abs=1e-12)
        ref = co.solve(co.Problem(prior=p, privacy=tpl.privacy, utility=tpl.utility))
        assert a["objective"][i] == pytest.approx(ref.objective, abs=1e-12)
    assert not a["channel"][0][:, :2].any()                  # the two unused outputs, in their places


def test_batch_keeps_every_part_of_a_leakage():
    """ALIP's leakage has two numbers (lower and upper): the batch made one float of the dict and
    stopped with a TypeError. Now a column each, equal to the per-user solve's."""
    tpl = co.Problem(prior=np.full(3, 1 / 3), privacy=[co.ALIP(epsilon_lower=0.5, epsilon_upper=1.0), co.LDP(2.0)],
                     utility=co.Distortion("hamming"))
    P = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    a = solve_batch(P, tpl).arrays
    assert list(a["leakage_keys"]) == ["alip.lower", "alip.upper", "ldp"]
    for i, p in enumerate(P):
        ref = co.solve(co.Problem(prior=p, privacy=tpl.privacy, utility=tpl.utility))
        leak = ref.leakage
        np.testing.assert_allclose(a["leakage"][i], [leak["alip"]["lower"], leak["alip"]["upper"], leak["ldp"]],
                                   rtol=0, atol=1e-12)


def test_a_parallel_sweep_starts_workers_only_for_work_worth_it(monkeypatch, capsys):
    """Tiny points run in this process (no worker is asked for; the bar counts every point); with
    the threshold at 0 and one point a chunk the workers are given chunks, the bar still counts
    every point once, and both give the serial sweep's results."""
    import importlib

    import joblib.executor

    sweep_mod = importlib.import_module("channelopt.sweep")     # (channelopt.sweep is the function)

    P = np.random.default_rng(21).dirichlet(np.ones(6))
    base = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    eps = np.linspace(0.5, 2.0, 8)
    serial = co.sweep(base, epsilon=eps)

    class NoWorkers:
        def __init__(self, *a, **k):
            raise AssertionError("workers started for 8 tiny points")

    with monkeypatch.context() as m:
        m.setattr(joblib.executor, "get_memmapping_executor", NoWorkers)
        small = co.sweep(base, epsilon=eps, n_jobs=2, progress=True)
    assert "8/8" in capsys.readouterr().err
    monkeypatch.setattr(sweep_mod, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(sweep_mod, "CHUNK_S", 0.0)
    par = co.sweep(base, epsilon=eps, n_jobs=2, progress=True)
    err = capsys.readouterr().err
    assert "8/8" in err and "9/8" not in err
    for a, b, c in zip(serial, small, par):
        assert a.objective == b.objective == pytest.approx(c.objective, abs=1e-12)
    assert list(par.values) == list(serial.values) == list(eps)


def test_a_parallel_sweep_shares_joblibs_pool_and_leaves_no_claims(monkeypatch, tmp_path):
    """The sweep's workers are joblib's own reusable pool: a `joblib.Parallel` call and a parallel
    `solve_batch` after a parallel sweep run on it (a plain loky pool put in its place breaks
    joblib's next call); and the sweep's claims directory is gone afterwards."""
    import importlib
    import tempfile

    import joblib

    sweep_mod = importlib.import_module("channelopt.sweep")     # (channelopt.sweep is the function)
    monkeypatch.setattr(sweep_mod, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(sweep_mod, "CHUNK_S", 0.0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    P = np.random.default_rng(22).dirichlet(np.ones(6))
    base = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Distortion("mae"))
    eps = np.linspace(0.5, 2.0, 8)
    par = co.sweep(base, epsilon=eps, n_jobs=2)
    assert list(tmp_path.iterdir()) == []
    assert joblib.Parallel(n_jobs=2)(joblib.delayed(abs)(-k) for k in range(4)) == [0, 1, 2, 3]
    priors = np.random.default_rng(23).dirichlet(np.ones(6), size=4)
    batch = solve_batch(priors, base, chunk_size=2, n_jobs=2)
    for e, r in zip(eps, par):
        fresh = co.solve(co.Problem(prior=P, privacy=[co.LDP(e)], utility=base.utility))
        assert r.objective == pytest.approx(fresh.objective, abs=1e-12)
    for p, obj in zip(priors, batch.arrays["objective"]):
        fresh = co.solve(co.Problem(prior=p, privacy=base.privacy, utility=base.utility))
        assert obj == pytest.approx(fresh.objective, abs=1e-12)


def test_a_short_sweep_takes_workers_that_are_already_up(monkeypatch):
    """100 LDP MAE points at d = 32 (about 0.2 s) with `sweep.PARALLEL_MIN_S` out of their reach:
    on a cold pool they stay in this process. Once the pool's worker has served a sweep, the same
    sweep asks for it (its cold first point is cheaper than the points left: `PARALLEL_WARM_S`),
    and after the pool is shut down it stays here again; every time with the serial sweep's
    objectives."""
    import importlib
    import time

    import joblib.executor

    sweep_mod = importlib.import_module("channelopt.sweep")     # (channelopt.sweep is the function)
    real_executor = joblib.executor.get_memmapping_executor
    real_executor(1).shutdown(wait=True)                        # a cold pool, whatever ran before
    P = np.random.default_rng(25).dirichlet(np.ones(32))
    base = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Distortion("mae"))
    eps = np.linspace(0.5, 3.0, 100)
    serial = co.sweep(base, epsilon=eps)
    monkeypatch.setattr(sweep_mod, "PARALLEL_MIN_S", 1e9)      # a cold worker is never worth starting
    asked = []

    def recording(*a, **k):
        asked.append(a)
        return real_executor(*a, **k)

    monkeypatch.setattr(joblib.executor, "get_memmapping_executor", recording)
    cold = co.sweep(base, epsilon=eps, n_jobs=2)
    assert asked == [] and sweep_mod._warm_workers() == 0
    with monkeypatch.context() as m:                            # start the worker: a sweep that asks for it
        m.setattr(sweep_mod, "PARALLEL_MIN_S", 0.0)
        co.sweep(base, epsilon=eps[:12], n_jobs=2)
    waited = time.perf_counter()
    while sweep_mod._warm_workers() < 1 and time.perf_counter() - waited < 120:
        time.sleep(0.05)                                        # (its chunks return once it has started)
    assert sweep_mod._warm_workers() == 1
    asked.clear()
    warm = co.sweep(base, epsilon=eps, n_jobs=2)
    assert asked == [(1,)]
    real_executor(1).shutdown(wait=True)
    assert sweep_mod._warm_workers() == 0
    asked.clear()
    again = co.sweep(base, epsilon=eps, n_jobs=2)
    assert asked == []
    for a, b, c, e in zip(serial, cold, warm, again):
        assert a.status == b.status == c.status == e.status == "optimal"
        assert a.objective == b.objective == e.objective == pytest.approx(c.objective, rel=1e-9, abs=1e-12)


def test_a_parallel_sweep_without_a_claims_directory_runs_here(monkeypatch):
    """Where no directory can be made for the claims, the points are solved in this process (no
    worker asked for, no traceback), with the serial sweep's results."""
    import importlib
    import tempfile

    import joblib.executor

    sweep_mod = importlib.import_module("channelopt.sweep")     # (channelopt.sweep is the function)
    P = np.random.default_rng(24).dirichlet(np.ones(6))
    base = co.Problem(prior=P, privacy=[co.LDP(1.0)], utility=co.Distortion("mae"))
    eps = np.linspace(0.5, 2.0, 8)
    serial = co.sweep(base, epsilon=eps)

    def no_directory(*a, **k):
        raise PermissionError(13, "Permission denied", "/tmp")

    def no_workers(*a, **k):
        raise AssertionError("workers asked for without a claims directory")

    monkeypatch.setattr(sweep_mod, "PARALLEL_MIN_S", 0.0)
    monkeypatch.setattr(tempfile, "mkdtemp", no_directory)
    monkeypatch.setattr(joblib.executor, "get_memmapping_executor", no_workers)
    par = co.sweep(base, epsilon=eps, n_jobs=2)
    assert [r.objective for r in par] == [r.objective for r in serial]
