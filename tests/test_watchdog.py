"""Leakage measures on textbook channels, the watchdog against brute force and the certified
ALIP optimum, and `channelopt analyze`."""

import json

import numpy as np
import pytest

from channelopt import LIP, Problem
from channelopt import measures as M
from channelopt.cli import main
from channelopt.errors import ProblemError
from channelopt.problem import Joint
from channelopt.watchdog import log_lifts, optimum_nmi, random_joint, watchdog


def _joint_x(P):
    """The secret is X itself."""
    P = np.asarray(P, float)
    return Joint(P, np.eye(P.size))


@pytest.mark.parametrize("d", [2, 3, 5])
def test_measures_of_identity_and_constant_channels(d):
    J = _joint_x(np.full(d, 1 / d))
    I = np.eye(d)
    for a in (2.0, 3.5):
        assert M.sibson(J, I, a) == pytest.approx(np.log(d))
        assert M.arimoto(J, I, a) == pytest.approx(np.log(d))
        # lift of the identity is 1/P(y) on the diagonal: (P(y) P(y)^-a)^(1/a) = d^((a-1)/a)
        assert M.alpha_lift(J, I, a) == pytest.approx((a - 1) / a * np.log(d))
    assert M.maximal_leakage(J, I) == pytest.approx(np.log(d))
    assert M.mutual_information(J, I) == pytest.approx(np.log(d))
    C = np.full((d, 3), 1 / 3)
    for f in (M.sibson, M.arimoto, M.alpha_lift):
        assert f(J, C, 2.0) == pytest.approx(0.0, abs=1e-12)
    assert M.maximal_leakage(J, C) == pytest.approx(0.0, abs=1e-12)


def test_measures_of_the_binary_symmetric_channel():
    q = 0.2
    J = _joint_x([0.5, 0.5])
    B = np.array([[1 - q, q], [q, 1 - q]])
    assert M.sibson(J, B, 2.0) == pytest.approx(2 * np.log(2 * np.sqrt(((1 - q) ** 2 + q ** 2) / 2)))
    assert M.maximal_leakage(J, B) == pytest.approx(np.log(2 * (1 - q)))
    h = -(q * np.log(q) + (1 - q) * np.log(1 - q))
    assert M.mutual_information(J, B) == pytest.approx(np.log(2) - h)
    # Sibson is nondecreasing in alpha and tends to the maximal leakage
    vals = [M.sibson(J, B, a) for a in (1.5, 2, 4, 50, 1e4)]
    assert all(x <= y + 1e-12 for x, y in zip(vals, vals[1:]))
    assert vals[-1] == pytest.approx(M.maximal_leakage(J, B), rel=1e-3)


def _brute_best_partition_leak(J, high):
    """Brute force over every partition of X_H into at most 3 groups: the smallest max log-lift."""
    import itertools
    best = np.inf
    for labels in itertools.product(range(3), repeat=len(high)):
        groups = [[h for h, l in zip(high, labels) if l == g] for g in range(3)]
        groups = [g for g in groups if g]
        best = min(best, max(log_lifts(J, g)[0] for g in groups))
    return best


def test_watchdog_merging_and_repair_and_certified_comparison():
    rng = np.random.default_rng(7)
    for _ in range(4):
        J = random_joint(3, 6, rng)
        for eps_l, eps_u in ((0.5, 0.3), (1.5, 0.5)):
            w = watchdog(J, eps_l, eps_u)
            up, low = w.leakage(J)
            assert up <= eps_u + 1e-12 and low <= eps_l + 1e-12            # repaired mechanism meets the budget
            # the released symbols are exactly those whose lifts are inside the budget (before repair)
            ps = J.sum(axis=1)
            ll = np.log(J / J.sum(axis=0) / ps[:, None])
            inside = [x for x in range(6) if ll[:, x].max() <= eps_u and ll[:, x].min() >= -eps_l]
            assert set(w.low) | set(w.moved) == set(inside)
            if len(w.high) >= 2 and not w.moved:
                # complete merging is at least as good as any partition of X_H (ALIP Prop 2)
                assert w.merged_lifts[0] <= _brute_best_partition_leak(J, w.high) + 1e-12
            assert optimum_nmi(J, eps_l, eps_u) >= w.nmi - 1e-9            # never beats the certified optimum


def test_watchdog_bad_input():
    with pytest.raises(ProblemError, match="Pr\\(x\\) = 0"):
        watchdog(np.array([[0.5, 0.0], [0.5, 0.0]]), 1, 1)
    with pytest.raises(ProblemError, match="eps_u must be"):
        watchdog(np.array([[0.25, 0.25], [0.25, 0.25]]), 1, -0.5)
    with pytest.raises(ProblemError, match="sum to 1"):
        watchdog(np.array([[0.3, 0.3], [0.3, 0.3]]), 1, 1)


def test_cli_analyze(tmp_path, capsys):
    assert main(["analyze", "relations", "--prior", "0.25,0.25,0.25,0.25", "--epsilon", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lip_to_ldp"]["exact"] <= doc["lip_to_ldp"]["prop1_bound"] + 1e-12
    assert main(["analyze", "composition", "--prior", "0.2,0.8", "--epsilons", "1,1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert 1.0 < doc["exact"] <= doc["thm4_bound"]
    J = tmp_path / "joint.csv"
    J.write_text("0.1,0.2,0.1\n0.3,0.1,0.2\n")
    assert main(["analyze", "watchdog", "--joint", str(J), "--eps-lower", "1", "--eps-upper", "0.3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["certified_optimum_nmi"] >= doc["nmi"] - 1e-9
    for argv, msg in ((["analyze", "relations", "--prior", "0.5,0.5", "--epsilon", "-1"], "epsilon must be"),
                      (["analyze", "composition", "--prior", "0.5,0.5", "--epsilons", ""], "n >= 1"),
                      (["analyze", "transfer", "--prior", "0.5,0.5", "--other", "0.2,0.3,0.5", "--epsilon", "1"],
                       "same length"),
                      (["analyze", "relations", "--prior", "0,1", "--epsilon", "1"], "positive probability")):
        assert main(argv) == 2
        out = capsys.readouterr()
        assert out.out == "" and msg in out.err and len(out.err.strip().splitlines()) == 1


def test_empirical_prior_rejects_unseen_symbols():
    from channelopt.relations import empirical_prior
    assert empirical_prior([0, 1, 1, 2], 3).tolist() == [0.25, 0.5, 0.25]
    with pytest.raises(ProblemError, match="symbol 2 is unseen"):
        empirical_prior([0, 1, 1], 3)
    with pytest.raises(ProblemError, match="n >= 1"):
        empirical_prior([], 3)


def test_audit_measures_include_the_secret_measures():
    from channelopt.audit import measures
    m = measures(Problem(prior=[0.5, 0.5], privacy=[LIP(1.0)]), np.array([[0.8, 0.2], [0.2, 0.8]]))
    assert m["secret_maximal_leakage"] == pytest.approx(np.log(1.6))
    assert m["secret_mutual_information"] == pytest.approx(m["mip"])
