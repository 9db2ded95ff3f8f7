"""Many LP points settled at once (`methods.settled`) against each point settled alone
(`frontend.settle`): the same Result, entry by entry, on the common case and on every way out of it."""

import dataclasses

import numpy as np
import pytest

import channelopt as co
from channelopt.methods.frontend import settle
from channelopt.methods.lp import build, solve_highs
from channelopt.methods.settled import settle_points


def points(notion, d, utility, seed, budgets):
    """A sweep's points: one prior, one utility object, the notion at each budget."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(d))
    if notion == "minid":
        first = co.IDLDP(epsilons=rng.choice([0.5, 1.0, 2.0], size=d))
        base = co.Problem(prior=P, privacy=[first], utility=utility)
        return [base.with_privacy([first.with_budget(epsilons=s * np.asarray(first.epsilons))]) for s in budgets]
    first = co.LDP(budgets[0]) if notion == "ldp" else co.LIP(budgets[0])
    base = co.Problem(prior=P, privacy=[first], utility=utility)
    return [base.with_privacy([first.with_budget(epsilon=e)]) for e in budgets]


def solved(p):
    """(channel, dual bound, raw) of the point's LP, as a sweep's point leaves them."""
    prog = build(p)
    raw = solve_highs(prog)
    assert raw.status == "optimal"
    return prog.channel(raw.z), prog.dual_bound(raw.y_ub, raw.y_eq), raw


def same(a, b):
    """Two Results alike in every field a caller reads."""
    assert a.status == b.status and a.message == b.message and a.solver == b.solver and a.method == b.method
    assert (a.channel is None) == (b.channel is None)
    if a.channel is not None:
        assert a.channel.shape == b.channel.shape and np.array_equal(a.channel, b.channel)
    assert a.objective == b.objective
    assert a.leakage == b.leakage and a.satisfied == b.satisfied
    assert dict(a.measures) == dict(b.measures) == {}
    assert (a.certificate is None) == (b.certificate is None)
    if a.certificate is not None:
        assert dataclasses.asdict(a.certificate) == dataclasses.asdict(b.certificate)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("notion", ["ldp", "lip", "minid"])
@pytest.mark.parametrize("kind", ["mae", "squared", "hamming", "random"])
def test_points_settled_together_equal_each_settled_alone(notion, kind, seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 14))
    utility = co.Distortion("distortion", matrix=rng.random((d, d))) if kind == "random" else co.Distortion(kind)
    probs = points(notion, d, utility, seed, list(rng.uniform(0.2, 4.0, 7)))
    channels, bounds, raws = zip(*(solved(p) for p in probs))
    together = settle_points(list(probs), list(channels), list(bounds), list(raws))
    for p, q, b, raw, r in zip(probs, channels, bounds, raws, together):
        alone = settle(p, q, b, raw, "HIGHS", "lp", with_measures=False)
        same(r, alone)
        assert r.status == "optimal"


def test_every_way_out_of_the_common_case_is_settled_as_alone():
    """Each point below leaves the common case in one way; each Result still equals `settle`'s,
    whatever the others in the block do (and they stay in the common case)."""
    d = 8
    utility = co.Distortion("mae")
    probs = points("ldp", d, utility, 3, [0.5, 0.8, 1.1, 1.4, 1.7, 2.0, 2.3, 2.6, 2.9, 3.2, 3.5])
    channels, bounds, raws = (list(x) for x in zip(*(solved(p) for p in probs)))
    q = channels[1].copy()                      # an output to merge: a column of entries under 1e-6
    q[:, -1] += 1e-8
    channels[1] = q
    q = channels[2].copy()                      # a non-finite entry
    q[0, 0] = np.nan
    channels[2] = q
    q = channels[3].copy()                      # a row off by more than ROW_TOL
    q[1] *= 1.001
    channels[3] = q
    q = channels[4].copy()                      # over its budget by round-off: repaired
    q[0, q[0].argmax()] *= 1.0 + 1e-6
    q[0] /= q[0].sum()
    channels[4] = q
    bounds[5] = None                            # no multipliers
    bounds[6] = -1e9                            # below the trivial bound: clamped
    bounds[7] = bounds[7] - 1e-3                # not within the gap: local
    q = channels[8].copy()                      # a negative entry past NEGATIVE_TOL
    q[2, 0] = -1e-6
    channels[8] = q
    together = settle_points(probs, channels, bounds, raws)
    statuses = []
    for p, q, b, raw, r in zip(probs, channels, bounds, raws, together):
        same(r, settle(p, q, b, raw, "HIGHS", "lp", with_measures=False))
        statuses.append(r.status)
    assert statuses[2] == statuses[3] == statuses[8] == "inaccurate"
    assert "mixed with" in together[4].message and "trivial bound" in together[6].message
    assert statuses[7] == "local" and statuses[0] == statuses[9] == statuses[10] == "optimal"


def test_points_of_other_utilities_priors_or_sizes_are_not_mixed():
    """A block of points from several problems (two priors, two utility objects, two sizes): each
    Result equals its own `settle`."""
    probs = (points("lip", 6, co.Distortion("mae"), 0, [0.5, 1.0, 2.0])
             + points("lip", 6, co.Distortion("mae"), 1, [0.5, 1.0])
             + points("ldp", 9, co.Distortion("squared"), 2, [1.0, 3.0]))
    probs = [probs[i] for i in (0, 3, 5, 1, 4, 6, 2)]
    channels, bounds, raws = (list(x) for x in zip(*(solved(p) for p in probs)))
    for p, q, b, raw, r in zip(probs, channels, bounds, raws, settle_points(probs, channels, bounds, raws)):
        same(r, settle(p, q, b, raw, "HIGHS", "lp", with_measures=False))
        assert r.objective == pytest.approx(co.solve(p).objective, rel=1e-9, abs=1e-12)
