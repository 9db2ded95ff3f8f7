"""Merged inputs (`methods.merged`): the channels of the small problems are channels of the whole
one (the independent audit), their distortion is at least the certified optimum (the whole LP's,
or LIP's reduced LP's, found without a time limit and so without them) and their bound at most
it; a solve under a time limit whose LP gives no answer returns the best of them."""

import numpy as np
import pytest

import channelopt as co
from channelopt.methods import merged
from channelopt.methods.lp import RawSolution
from conftest import replace_backends


def problem(notion, kind, d=256, seed=0):
    P = np.random.default_rng(seed).dirichlet(np.ones(d))
    n = co.LDP(1.5) if notion == "ldp" else co.LIP(1.0)
    return co.Problem(prior=P, privacy=[n], utility=co.Distortion(kind))


@pytest.mark.parametrize("notion, kind, seed", [("ldp", "mae", 0), ("ldp", "squared", 1), ("lip", "mae", 2),
                                                ("lip", "squared", 3)])
def test_each_merged_channel_is_feasible_and_its_bound_holds_against_the_whole_lp(notion, kind, seed):
    p = problem(notion, kind, seed=seed)
    assert merged.applies(p)
    optimum = co.solve(p)               # (no time limit: the whole LP, or LIP's certified reduced LP)
    assert optimum.status == "optimal" and optimum.method in ("lp", "top-outputs")
    found = list(merged.channels(p, deadline=np.inf))
    assert [g for _, g, _ in found] == [32, 64]                      # levels up to a quarter of d = 256
    tol = 1e-9 * optimum.objective
    values = []
    for q, _, bound in found:
        assert co.audit(p, q).ok
        values.append(p.utility.evaluate(p, q))
        assert bound <= optimum.objective + tol <= values[-1] + 2 * tol
        assert values[-1] <= 1.02 * optimum.objective and bound >= 0.98 * optimum.objective     # close, both ways
    assert values[1] <= values[0] + tol                            # finer groups, no worse


def test_a_solve_whose_lp_gives_no_answer_returns_the_best_merged_channel_with_its_bound(monkeypatch):
    p = problem("ldp", "mae")
    optimum = co.solve(p).objective
    replace_backends(monkeypatch, lambda prog, prob, name: RawSolution("failed", None, None, None, "Time limit reached"))
    r = co.solve(p, time_limit=30.0)
    assert r.status == "local" and r.method == "merged-inputs" and co.audit(p, r.full_channel).ok
    assert r.objective == pytest.approx(p.utility.evaluate(p, r.full_channel), rel=1e-12)
    assert r.certificate.method == "posterior-dual" and r.certificate.details["groups"] == 64
    assert r.certificate.bound <= optimum * (1 + 1e-9) <= r.objective * (1 + 2e-9)
    assert r.objective <= 1.01 * optimum and "merged-inputs channel (64 groups)" in r.message
    monkeypatch.undo()
    assert co.solve(p, time_limit=30.0).status == "optimal"        # with the LP: certified, as before


@pytest.mark.parametrize("case", ["hamming", "id-ldp", "small", "latent", "two notions"])
def test_not_applied_outside_its_setting(case):
    p = problem("ldp", "mae")
    if case == "hamming":
        p = problem("ldp", "hamming")
    elif case == "id-ldp":
        p = co.Problem(prior=p.prior, privacy=[co.IDLDP(epsilons=np.linspace(1, 2, 256))], utility=p.utility)
    elif case == "small":
        p = problem("ldp", "mae", d=96)
    elif case == "latent":
        pg = np.array([0.3, 0.7])
        T = np.random.default_rng(0).dirichlet(np.ones(256), size=2)
        p = co.Problem(prior=pg @ T, latent={"prior": pg, "conditional": T}, privacy=[co.LIP(1.0)], utility=p.utility)
    else:
        p = co.Problem(prior=p.prior, privacy=[co.LDP(1.0), co.LIP(2.0)], utility=p.utility)
    assert not merged.applies(p)
