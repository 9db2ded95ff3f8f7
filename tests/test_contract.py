"""The notion contract and the solver registry: every registered notion and backend keeps them.

These tests iterate the registries, so a new notion or solver is checked without editing them.
"""

from __future__ import annotations

import numpy as np
import pytest

import channelopt as co
from channelopt import relations
from channelopt.notions import NOTIONS, NotHomogeneous, Notion, parse_notion
from channelopt.solvers import BACKENDS, SOLVERS, attempt_order, fallback_order

RNG = np.random.default_rng(0)


def example(name, d=4, eps=0.8, seed=0):
    return parse_notion(NOTIONS[name].example(d, eps, np.random.default_rng(seed)), "privacy[0]")


@pytest.mark.parametrize("name", list(NOTIONS))
def test_every_notion_implements_the_contract(name):
    cls = NOTIONS[name]
    assert issubclass(cls, Notion) and cls.name == name
    n = example(name)
    # the table form parses back to the same notion
    assert parse_notion(n.to_table(), "privacy[0]").to_table() == n.to_table()
    # budgets can be replaced and are validated
    for key, value in n.budgets().items():
        if np.ndim(value) == 0:
            m = n.with_budget(**{key: 2 * value + 0.1})
            assert m.budgets()[key] == pytest.approx(2 * value + 0.1)
            with pytest.raises(co.ProblemError, match=key):
                n.with_budget(**{key: -1.0})
    with pytest.raises(co.ProblemError, match="no budget"):
        n.with_budget(not_a_budget=1.0)
    # a constant channel releases nothing: every notion holds (a prior DI admits: max/min < e^eps)
    p = co.Problem(prior=[0.22, 0.24, 0.26, 0.28], privacy=[n], utility=co.Distortion("hamming"))
    const = np.full((4, 4), 0.25)
    assert n.satisfied(n.leakage(p, const))
    # the constraint form the methods will use exists and agrees with the flags
    if n.homogeneous:
        C = n.column_rows(p)
        C = C.toarray() if hasattr(C, "toarray") else np.asarray(C)
        assert C.shape[1] == 4 and np.all(C @ np.ones(4) <= 1e-12)
    else:
        with pytest.raises(NotHomogeneous):
            n.column_rows(p)
    assert (n.linear(p) is None) == (not n.linear_form)
    if not n.linear_form:
        assert all(g(const) >= 0 for g in n.smooth(p))


@pytest.mark.parametrize("name", [n for n, c in NOTIONS.items() if c.linear_form])
def test_linear_rows_hold_exactly_when_the_audit_says_so(name):
    """The LP rows (with the best auxiliaries, found by an LP) accept a channel iff the leakage,
    computed from the definition, is within the budget: checked on random channels."""
    from scipy.optimize import linprog

    n = example(name, eps=0.3, seed=1)
    p = co.Problem(prior=[0.22, 0.24, 0.26, 0.28], privacy=[n], utility=co.Distortion("hamming"))
    B = n.linear(p)
    rng = np.random.default_rng(2)
    agree, held = 0, 0
    for k in range(30):
        t = (0.01, 0.05, 0.2, 0.6, 1.0)[k % 5]
        q = (1 - t) / 4 + t * rng.dirichlet(np.ones(4), size=4)
        v = q.ravel()
        # feasible auxiliaries? A_aux a <= b - A_q v, E_aux a = e - E_q v, bounds
        bounds = list(zip(B.aux_lower, B.aux_upper))
        if B.n_aux:
            res = linprog(np.zeros(B.n_aux), A_ub=B.A_aux.toarray(), b_ub=B.b - B.A_q @ v,
                          A_eq=None if B.E_aux is None else B.E_aux.toarray(),
                          b_eq=None if B.E_q is None else B.e - B.E_q @ v, bounds=bounds, method="highs")
            rows_ok = res.status == 0
        else:
            rows_ok = bool(np.all(B.A_q @ v <= B.b + 1e-12))
        audit_ok = n.satisfied(n.leakage(p, q), tol=1e-9)
        agree += rows_ok == audit_ok
        held += audit_ok
    assert agree == 30 and 0 < held < 30


def test_budget_free_measures_come_from_the_registry():
    p = co.Problem(prior=[0.2, 0.3, 0.5], privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    q = RNG.dirichlet(np.ones(3), size=3)
    m = co.audit(p, q).measures
    expected = [name for name, cls in NOTIONS.items() if cls.budget_free]
    assert [k for k in m if not k.startswith("secret_")] == expected
    assert m["ldp"] == pytest.approx(np.log((q.max(axis=0) / q.min(axis=0)).max()))


def test_relations_cones_are_the_definitions():
    """relations builds its cones from the notions' rows; compare with the definitions written
    out here (CA-LIP Eq 4, LIP-TDSC Def 1, Def 4)."""
    P, eps = np.array([0.1, 0.25, 0.65]), 0.7
    e, d = np.exp(eps), 3
    lip = np.vstack([np.eye(d) - e * np.outer(np.ones(d), P), np.outer(np.ones(d), P) / e - np.eye(d)])
    i, j = np.nonzero(~np.eye(d, dtype=bool))
    ldp = np.zeros((i.size, d))
    ldp[np.arange(i.size), i], ldp[np.arange(i.size), j] = 1.0, -e
    for got, want in ((relations.lip_cone(P, eps), lip), (relations.ldp_cone(d, eps), ldp),
                      (relations.di_cone(P, eps), ldp * P[None, :])):
        # rows <= 0 entrywise hold for every column c >= 0 (LIP caps e^eps at 1 / P_x there)
        key = lambda A: sorted(map(tuple, np.round(A[(A > 1e-12).any(axis=1)], 12)))  # noqa: E731
        assert key(got) == key(want)


def test_solver_registry_drives_validation_and_fallback():
    assert SOLVERS[0] == "auto" and set(SOLVERS[1:]) == set(BACKENDS)
    assert fallback_order("lp")[0] == "HIGHS" and "HIGHS" not in fallback_order("conic")
    assert all(BACKENDS[s].available() for s in BACKENDS)
    with pytest.raises(co.ProblemError, match="conic"):
        attempt_order("conic", "HIGHS", True)
    assert attempt_order("lp", "ECOS", True)[0] == "ECOS"
    p = co.Problem(prior=[0.3, 0.7], privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    with pytest.raises(co.ProblemError, match="solver must be one of"):
        co.solve(p, solver="GUROBI")


def test_certificate_is_typed_and_keeps_the_json_keys():
    p = co.Problem(prior=[0.3, 0.7], privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    r = co.solve(p)
    c = r.certificate
    assert isinstance(c, co.Certificate) and c.sense == "min"
    assert r.to_json()["certificate"]["lower_bound"] == c.bound == c["lower_bound"]
    assert c.gap == pytest.approx(r.objective - c.bound)
    b = co.solve(co.Problem(prior=[0.3, 0.7], privacy=[co.LIP(1.0)], utility=co.Bayes("map")))
    assert b.certificate.side == "upper_bound" and "upper_bound" in b.to_json()["certificate"]
    with pytest.raises(TypeError):
        co.Result("optimal")  # by keywords only
