"""CA-LIP relations: the exact implied leakages (cone LPs, ray enumeration) against materialized
channels audited by channelopt.audit, and the closed forms against them."""

import itertools

import numpy as np
import pytest

from channelopt import LDP, LIP, Problem
from channelopt.audit import audit
from channelopt import relations
from channelopt.theorems import calip


def _channel(c, t=None):
    """Two-output channel whose first column is proportional to the cone element c."""
    c = np.asarray(c, float)
    t = 0.5 / c.max() if t is None else t
    return np.stack([t * c, 1 - t * c], axis=1)


def _lip(P, q):
    return audit(Problem(prior=P, privacy=[LIP(100.0)]), q).leakage["lip"]


@pytest.mark.parametrize("P,eps", [([0.1, 0.3, 0.6], 1.0), ([0.25] * 4, 0.5), ([0.01, 0.33, 0.33, 0.33], 2.0)])
def test_cone_lp_leakages_are_attained_and_never_exceeded(P, eps):
    P = np.array(P)
    d = P.size
    # eps-LIP channels: every ray gives a feasible channel, and the LP value is the max LDP leakage
    R = relations.rays(relations.lip_cone(P, eps), P)
    chans = [_channel(c) for c in R]
    assert all(_lip(P, q) <= eps + 1e-9 for q in chans)
    ldp = [audit(Problem(prior=P, privacy=[LDP(100.0)]), q).leakage["ldp"] for q in chans]
    exact = relations.ldp_leakage_of(relations.lip_cone(P, eps), d)
    assert max(ldp) == pytest.approx(exact, rel=1e-9)
    assert exact <= calip.prop1_bound(P, eps) + 1e-12
    # eps-LDP channels: LIP leakage never above the converse bound, attained by the extreme ray
    rng = np.random.default_rng(0)
    for _ in range(30):
        c = np.exp(eps * rng.random(d))                       # any column with max/min ratio <= e^eps
        assert _lip(P, _channel(c)) <= calip.ldp_to_lip(P.min(), eps) + 1e-12
    c = np.full(d, np.exp(eps))
    c[np.argmin(P)] = 1.0
    assert _lip(P, _channel(c)) == pytest.approx(calip.ldp_to_lip(P.min(), eps), rel=1e-12)
    assert relations.lip_leakage_of(relations.ldp_cone(d, eps), P) == pytest.approx(calip.ldp_to_lip(P.min(), eps), rel=1e-9)


def test_composed_leakage_equals_the_audit_of_materialized_product_channels():
    P = np.array([0.2, 0.3, 0.5])
    eps = [1.0, 0.5]
    R = [relations.rays(relations.lip_cone(P, e), P) for e in eps]
    joint = P[:, None] * np.eye(3)
    exact = relations.composed_leakage(R, joint)
    best = 0.0
    for c1, c2 in itertools.product(R[0], R[1]):
        q1, q2 = _channel(c1), _channel(c2)
        prod = np.einsum("xa,xb->xab", q1, q2).reshape(3, 4)           # (Y1, Y2) from the same X
        best = max(best, _lip(P, prod))
    assert best == pytest.approx(exact, rel=1e-9)
    # random feasible pairs never exceed it
    rng = np.random.default_rng(1)
    for _ in range(40):
        cs = [R[k][rng.integers(len(R[k]), size=2)].T @ rng.dirichlet(np.ones(2)) for k in range(2)]
        prod = np.einsum("xa,xb->xab", _channel(cs[0]), _channel(cs[1])).reshape(3, 4)
        assert _lip(P, prod) <= exact + 1e-9
    assert exact <= calip.thm4_bound(P.min(), eps)


def test_repeated_release_enumeration_equals_the_general_composition():
    P = np.array([0.1, 0.3, 0.6])
    R = [relations.rays(relations.lip_cone(P, e), P) for e in (0.5, 2.0, 1.0)]
    joint = np.einsum("i,ij,ik->ijk", P, np.eye(3), np.eye(3))        # the same X three times
    assert relations.repeated_leakage(R, P) == pytest.approx(relations.composed_leakage(R, joint), rel=1e-12)


def test_single_release_composition_is_the_budget():
    P = np.array([0.1, 0.2, 0.7])
    for eps in (0.3, 2.0):
        R = [relations.rays(relations.lip_cone(P, eps), P)]
        assert relations.composed_leakage(R, P) == pytest.approx(eps, rel=1e-9)


def test_transferability_lp_against_a_materialized_channel():
    P1, P2, eps = np.array([0.3, 0.3, 0.4]), np.array([0.1, 0.4, 0.5]), 1.0
    exact = relations.lip_leakage_of(relations.lip_cone(P1, eps), P2)
    R = relations.rays(relations.lip_cone(P1, eps), P1)
    assert max(_lip(P2, _channel(c)) for c in R) == pytest.approx(exact, rel=1e-9)
    assert exact <= eps + relations.eta(P1, P2) + 1e-12


def test_cor6_printed_phi_fails_where_the_log_is_missing():
    """At eps = 5 with P1_min = 1/13 the printed condition says eta + eps is the smallest term of
    Eq 12 while ln((e^eps - 1 + P1_min)/P1_min) is smaller; Phi with a log gets it right."""
    th = __import__("channelopt.theorems", fromlist=["get"]).get("calip-cor6")
    bad = [c for c in th.cases(False) if th.check(c).kind != "holds"]
    assert bad
    for c in bad:
        P1, P2, eps = np.array(c["prior"]), np.array(c["other"]), c["epsilon"]
        p1, cc = P1.min(), min(P1.min(), P2.min())
        phi_log = np.log((np.exp(eps) - 1 + p1) / p1) - eps
        cond = relations.tv(P1, P2) <= cc * (np.exp(min(eps, phi_log)) - 1)
        terms = [relations.eta(P1, P2) + eps, 2 * eps, np.log((np.exp(eps) - 1 + p1) / p1)]
        assert cond == (terms[0] <= min(terms[1:]))


def test_example1_measures_except_the_printed_lip():
    for P in (0.5, 0.2):
        for q in (0.1, 0.3, 0.7):
            ch = np.array([[1 - q, q], [q, 1 - q]])
            m = audit(Problem(prior=[1 - P, P], privacy=[LDP(50.0)]), ch).measures
            ex = calip.example1(P, q)
            for k in ("ldp", "mil", "mip"):
                assert ex[k] == pytest.approx(m[k], rel=1e-12)
            y1 = P * (1 - q) + (1 - P) * q
            ratios = np.array([y1 / q, y1 / (1 - q), (1 - y1) / q, (1 - y1) / (1 - q)])
            assert np.abs(np.log(ratios)).max() == pytest.approx(m["lip"], rel=1e-12)   # with the log, both ways


def test_cip_mean_interval_lp_against_random_channels_and_extremes():
    from scipy.stats import binom
    from channelopt.theorems.lip_cns import cip_interval, mmse_given_mean_interval
    N, P1 = 3, 0.3
    s = np.arange(N + 1.0)
    PS = binom.pmf(s, N, P1)
    var = PS @ s ** 2 - (PS @ s) ** 2
    assert mmse_given_mean_interval(PS, s, 0, N) == pytest.approx(0, abs=1e-12)        # direct release
    assert mmse_given_mean_interval(PS, s, N * P1, N * P1) == pytest.approx(var, rel=1e-9)  # no information
    lo, hi = cip_interval(N, P1, 0.7)
    best = mmse_given_mean_interval(PS, s, lo, hi)
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(4000):
        q = rng.dirichlet(np.ones(3) * 0.3, size=N + 1)
        joint = PS[:, None] * q
        lam = joint.sum(axis=0)
        means = (s @ joint) / lam
        if np.all((means >= lo - 1e-12) & (means <= hi + 1e-12)):
            found += 1
            assert PS @ s ** 2 - lam @ means ** 2 >= best - 1e-12
    assert found > 50


def _set_deltas(P, q, eps):
    """Brute force over all sets S_y (and single inputs: set inputs are mixtures) of Def 5 and Def 1."""
    P = np.asarray(P)
    d, m = q.shape
    lam = P @ q
    subsets = [list(S) for k in range(1, m + 1) for S in itertools.combinations(range(m), k)]
    e = np.exp(eps)
    lip = max(max(q[x, S].sum() / e - lam[S].sum(), lam[S].sum() - e * q[x, S].sum()) for x in range(d) for S in subsets)
    ldp2 = max(q[x, S].sum() - e * e * q[x2, S].sum() for x in range(d) for x2 in range(d) if x != x2 for S in subsets)
    return lip, ldp2


def test_cor3_converse_constant_is_2e_eps_not_e_eps_plus_1():
    P, eps, dl = [0.2, 0.3, 0.5], 1.0, 0.01
    val, q = relations.sup_approx(P, eps, dl, 3, "lip", "set", "ldp", 2 * eps, channel=True)
    lip_delta, ldp_delta = _set_deltas(P, q, eps)
    assert lip_delta <= dl + 1e-12                           # the channel is (eps, delta)-LIP (Def 5)
    assert ldp_delta == pytest.approx(val, rel=1e-9)
    assert ldp_delta > (np.exp(eps) + 1) * dl + 1e-4         # Cor 3's constant fails
    assert ldp_delta <= 2 * np.exp(eps) * dl + 1e-12         # e^eps (e^-eps q - lam) + e^eps (lam - e^eps q')
    # the pointwise form (Eq 4) is weaker than Def 5: its converse delta grows with the outputs
    assert relations.sup_approx([0.5, 0.5], 0.1, dl, 8, "lip", "pointwise", "ldp", 0.2) > 5 * (np.exp(0.1) + 1) * dl
