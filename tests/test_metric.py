"""metric-ldp (d-privacy): checked against libqif's d-privacy LP, against the same constraints
written for every pair (ID-LDP with pair budgets eps d(x, x')), and against its definition."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import channelopt as co
from channelopt.notions import MetricLDP

qif = pytest.importorskip("qif")


def manhattan(rows, cols):
    x = np.arange(rows * cols)
    r, c = x // cols, x % cols
    return np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])


@pytest.mark.parametrize("seed", range(4))
def test_optimum_equals_libqif_d_privacy_lp(seed):
    rng = np.random.default_rng(seed)
    d, eps = int(rng.integers(3, 8)), float(rng.uniform(0.2, 1.5))
    P = rng.dirichlet(np.ones(d))
    pts = rng.random((d, 2))
    D = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(axis=2))
    L = rng.random((d, d)) * (1 - np.eye(d))
    C = np.array(qif.mechanism.d_privacy.min_loss_given_d(
        P, d, lambda a, b: eps * D[a, b], lambda x, y: L[x, y]))
    reference = float((P[:, None] * C * L).sum())
    r = co.solve(co.Problem(prior=P, privacy=[MetricLDP(eps, distance=D)],
                            utility=co.Distortion("distortion", matrix=L)))
    assert r.status == "optimal"
    assert r.objective == pytest.approx(reference, rel=1e-8, abs=1e-10)
    assert r.leakage["metric-ldp"] <= eps * (1 + 1e-7)


@pytest.mark.parametrize("rows,cols", [(2, 3), (3, 3), (3, 4)])
@pytest.mark.parametrize("utility", ["hamming", "bayes-mse", "map"])
def test_grid_edges_equal_all_pairs(rows, cols, utility):
    """Constraints between neighbouring cells only, against every pair written out."""
    d, eps = rows * cols, 0.6
    P = np.random.default_rng(d).dirichlet(np.ones(d))
    util = co.Distortion(utility) if utility == "hamming" else co.Bayes(utility)
    grid = MetricLDP(eps, grid=[rows, cols])
    p = co.Problem(prior=P, privacy=[grid], utility=util)
    i, j, dist = grid.pairs(p)
    assert i.size == 2 * (rows * (cols - 1) + cols * (rows - 1)) and np.all(dist == 1)
    np.testing.assert_array_equal(grid.distances(p), manhattan(rows, cols))
    pairs = co.IDLDP(pair_epsilons=(eps * manhattan(rows, cols)).tolist())
    a = co.solve(p)
    b = co.solve(co.Problem(prior=P, privacy=[pairs], utility=util))
    assert a.status == b.status == "optimal"
    assert a.objective == pytest.approx(b.objective, rel=1e-9, abs=1e-12)
    assert co.audit(co.Problem(prior=P, privacy=[pairs], utility=util), a.channel).ok


def test_line_metric_keeps_only_neighbours():
    """|values_x - values_x'| on a line: consecutive values only (the rest chain)."""
    values = [0.0, 1.5, 2.0, 5.0]
    p = co.Problem(prior=[0.1, 0.2, 0.3, 0.4], values=values, privacy=[MetricLDP(0.5)], utility=co.Distortion("mae"))
    i, j, dist = MetricLDP(0.5).pairs(p)
    assert sorted(zip(i.tolist(), j.tolist())) == [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)]
    np.testing.assert_allclose(sorted(dist), sorted([1.5, 1.5, 0.5, 0.5, 3.0, 3.0]))


def test_leakage_is_the_definition():
    rng = np.random.default_rng(5)
    d = 5
    pts = rng.random((d, 2))
    D = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(axis=2))
    n = MetricLDP(1.0, distance=D)
    p = co.Problem(prior=np.full(d, 0.2), privacy=[n], utility=co.Distortion("hamming"))
    for _ in range(5):
        q = rng.dirichlet(np.ones(3), size=d)
        brute = max(np.log(q[x, y] / q[x2, y]) / D[x, x2]
                    for x, x2 in itertools.permutations(range(d), 2) for y in range(3))
        assert n.leakage(p, q) == pytest.approx(max(brute, 0.0), rel=1e-12)
    q = np.array([[1.0, 0.0]] + [[0.5, 0.5]] * (d - 1))
    assert n.leakage(p, q) == np.inf


def test_problem_file_sweep_and_posterior_lp_pick_it_up(problems_dir):
    p = co.load_problem(problems_dir / "geo_ind_grid.toml")
    results = co.sweep(p, epsilon=[0.3, 0.7, 1.5])
    assert [r.status for r in results] == ["optimal"] * 3
    assert all(r.leakage["metric-ldp"] <= e * (1 + 1e-7) for r, e in zip(results, (0.3, 0.7, 1.5)))
    assert results[0].objective >= results[1].objective >= results[2].objective
    bayes = co.solve(co.Problem(prior=p.prior, privacy=p.privacy, utility=co.Bayes("bayes-mse")))
    assert bayes.status == "optimal" and bayes.method == "posterior-lp"
    assert bayes.certificate.gap <= 1e-9 * max(1.0, bayes.objective)


@pytest.mark.parametrize("table,match", [
    ({"grid": [2, 2]}, "grid 2 x 2 has 4 cells"),
    ({"grid": [3, "x"]}, "grid must be"),
    ({"graph": [[0, 0, 1.0]]}, "two different inputs"),
    ({"graph": [[0, 1, -1.0]]}, "finite length > 0"),
    ({"graph": "ring"}, "list of"),
    ({"distance": [[0, 0, 1], [0, 0, 1], [1, 1, 0]]}, r"distance\[0\]\[1\] must be > 0"),
    ({"distance": [[0, 1], [1, 0]]}, "must be 3 x 3"),
    ({"grid": [3, 1], "graph": [[0, 1, 1.0]]}, "at most one of"),
    ({"epsilon": -1}, "epsilon must be a finite number > 0"),
    ({"distance": [[0, 800, 1600], [800, 0, 800], [1600, 800, 0]]}, r"epsilon \* distance reaches 800 "),
])
def test_bad_metric_is_a_clear_input_error(table, match):
    doc = {"input": {"prior": [0.2, 0.3, 0.5]}, "privacy": [{"notion": "metric-ldp", "epsilon": 1.0, **table}],
           "utility": {"kind": "hamming"}}
    with pytest.raises(co.ProblemError, match=match) as e:
        co.problem_from_dict(doc)
    assert str(e.value).startswith("privacy[0]")
    dup = {"input": {"prior": [0.5, 0.5], "values": [1.0, 1.0]}, "privacy": [{"notion": "metric-ldp", "epsilon": 1.0}],
           "utility": {"kind": "hamming"}}
    with pytest.raises(co.ProblemError, match="distinct input values"):
        co.problem_from_dict(dup)
