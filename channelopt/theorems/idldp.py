"""ID-LDP: "Providing Input-Discriminative Protection for Local Differential Privacy" —
the OUE baseline of §III-C, Table I, Lemma 1, Lemma 2 and Theorem 4 (IDUE-PS)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar

from ..estimators import ue_count_variance
from . import Theorem
from . import Outcome
from .check import VERIFY_TOL, bound_claim, value_claim
from .grids import eps_grid

CITE = "ID-LDP"


def ue_ldp_leakage(p: float, q: float) -> float:
    """Exact LDP leakage of symmetric unary encoding: two inputs differ in exactly two bits, so the
    worst output ratio is (p/q) * ((1-q)/(1-p)) (or its inverse), the other bits cancelling."""
    return abs(float(np.log(p * (1 - q) / (q * (1 - p)))))


def ue_variance(p, q):
    """Per-user variance of the UE unbiased count of an absent symbol: q(1-q)/(p-q)^2."""
    return ue_count_variance(1, 0, p, q)


def best_ue(eps: float) -> tuple[float, float, float]:
    """Global minimum of q(1-q)/(p-q)^2 over 0 < q < p < 1 with p(1-q)/(q(1-p)) <= e^eps.

    For fixed q the objective decreases in p on p > q, so the privacy constraint binds:
    p(q) = e q / (1 - q + e q), which is < 1 for every q < 1. What remains is a smooth function of
    one variable on (0, 1): a 20,001-point grid locates the basin, a bounded Brent search refines
    it, and the grid minimum bounds the refinement from above.
    """
    e = np.exp(eps)
    p_of = lambda q: e * q / (1 - q + e * q)    # noqa: E731
    f = lambda q: ue_variance(p_of(q), q)        # noqa: E731
    grid = np.linspace(1e-6, 1 - 1e-6, 20001)
    vals = f(grid)
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    r = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    q = r.x if r.fun <= vals[i] else grid[i]
    return p_of(q), q, float(f(q))


def _cases(quick: bool) -> list[dict]:
    return [{"epsilon": eps} for eps in eps_grid(quick)]


def _oue(inputs):
    eps = inputs["epsilon"]
    p, q = 0.5, 1 / (np.exp(eps) + 1)
    claimed_value = 4 * np.exp(eps) / (np.exp(eps) - 1) ** 2
    leak = ue_ldp_leakage(p, q)
    bp, bq, best = best_ue(eps)
    o = value_claim(inputs, claimed_value, best, {"parameters": {"p": p, "q": q}, "exact_variance": ue_variance(p, q)},
                    {"parameters": {"p": bp, "q": bq}, "objective": best})
    o.leakage_of_claim = leak
    if leak > eps * (1 + 1e-6):
        o.kind, o.gap = "infeasible", leak - eps
    elif abs(ue_variance(p, q) - claimed_value) > 1e-6 * claimed_value:
        o.kind, o.gap = "infeasible", abs(ue_variance(p, q) - claimed_value)
    return o


THEOREMS = [
    Theorem("idldp-oue", f"{CITE} §III-C (OUE)", "OUE p = 1/2, q = 1/(e^eps+1) is eps-LDP and attains the minimum "
            "UE count variance 4 e^eps / (e^eps - 1)^2 per user", _cases, _oue),
]


# ---- Table I, Lemma 1, Lemma 2, Theorem 4 -------------------------------------------------------

TABLE_I = {"RAPPOR": 10.0, "OUE": 9.9, "IDUE": 8.86}
"""Table I's printed totals (upper end for IDUE: 8.68n ~ 8.86n), in units of n, one or two decimals."""


def _table_cases(quick: bool) -> list[dict]:
    return [{"mechanism": k, "epsilons": [float(np.log(4)), float(np.log(6))], "sizes": [1, 4],
             "printed_total": v} for k, v in TABLE_I.items()]


def _table(inputs):
    """Printed totals against exact ones: RAPPOR and OUE at eps = ln 4 (worst case over counts, Eq 8's
    objective), IDUE against the certified opt0 optimum (encoded.idue). A printed value holds if the
    exact value rounds to it at the printed precision."""
    from ..encoded import idue, unary
    L = idue.Levels.make(inputs["epsilons"], inputs["sizes"])
    printed = inputs["printed_total"]
    half = 0.005 if round(printed, 1) != printed else 0.05
    mech = inputs["mechanism"]
    if mech == "IDUE":
        r = idue.design(L, "opt0")
        exact, extra = r.value, {"parameters": {"a": r.a.tolist(), "b": r.b.tolist()}, "lower_bound": r.bound}
    else:
        a, b = unary.rappor(L.epsilons.min()) if mech == "RAPPOR" else unary.oue(L.epsilons.min())
        exact, extra = idue.worst_case(L, [a, a], [b, b]), {"parameters": {"a": a, "b": b}}
    claimed = {"objective": printed}
    optimum = {"objective": exact, **extra}
    if abs(exact - printed) <= half + 1e-12:
        return Outcome("holds", inputs, claimed, optimum, None, abs(exact - printed))
    kind = "suboptimal" if printed > exact else "infeasible"
    return Outcome(kind, inputs, claimed, optimum, None, abs(exact - printed))


TABLE_I_IDUE = {"flip_if_1": [0.41, 0.33], "flip_if_0": [0.33, 0.28], "variance": [3.27, 1.32], "count_coef": [0.31, 0.13]}
"""Table I's printed IDUE row for i = 1 and i = 2..5: flip probabilities 1 - a_i and b_i, and the
variance b(1-b)/(a-b)^2 n + (1-a-b)/(a-b) c_i as its two printed coefficients."""


def _table_repaired(inputs):
    """Table I read as a rounding presentation, judged at its printed precision (two decimals): the
    IDUE parameters are the certified opt0 optimum rounded to two decimals; each printed variance
    coefficient is within 0.01 of its value at the rounded parameters; and the printed totals are
    the sums of the printed coefficients (upper end: 3.27 + 4 x 1.32 + 0.31). RAPPOR and OUE as
    printed."""
    if inputs["mechanism"] != "IDUE":
        return _table(inputs)
    from ..encoded import idue
    L = idue.Levels.make(inputs["epsilons"], inputs["sizes"])
    r = idue.design(L, "opt0")
    row = TABLE_I_IDUE
    a, b = 1 - np.array(row["flip_if_1"]), np.array(row["flip_if_0"])
    rounds_to = bool(np.all(np.round(1 - np.asarray(r.a), 2) == row["flip_if_1"])
                     and np.all(np.round(np.asarray(r.b), 2) == row["flip_if_0"]))
    at_rounded = np.r_[b * (1 - b) / (a - b) ** 2, (1 - a - b) / (a - b)]
    printed = np.r_[row["variance"], row["count_coef"]]
    figures_ok = bool(np.all(np.abs(at_rounded - printed) <= 0.01 + 1e-12))
    total = float(np.asarray(row["variance"]) @ np.asarray(inputs["sizes"]) + max(row["count_coef"]))
    claimed = {"objective": inputs["printed_total"]}
    optimum = {"objective": total, "parameters_round_to_the_printed": rounds_to,
               "coefficients_at_the_rounded_parameters": at_rounded.tolist(), "exact_optimum": r.value}
    ok = rounds_to and figures_ok and abs(total - inputs["printed_total"]) <= 1e-9
    return Outcome("holds" if ok else "suboptimal", inputs, claimed, optimum, None, abs(total - inputs["printed_total"]))


def _level_cases(quick: bool) -> list[dict]:
    sets = [((0.5, 1.0), (2, 4)), ((1.0, 1.2, 2.0), (1, 1, 6)), ((0.1, 0.5), (1, 5)), ((1.0, 3.0), (3, 3)),
            ((2.0, 2.4, 4.0), (2, 2, 2)), ((0.5, 5.0), (1, 2))]
    sets = sets[::2] if quick else sets
    return [{"epsilons": list(e), "sizes": list(m), "model": model}
            for e, m in sets for model in (("opt1", "opt2") if quick else ("opt0", "opt1", "opt2"))]


def _lemma1(inputs):
    """ID-LDP Lemma 1: an E-MinID-LDP mechanism is min(max E, 2 min E)-LDP. Checked on the IDUE designs
    (exact LDP leakage of unary encoding) and on the certified LP optimum of a Hamming problem under
    MinID-LDP over the items (any channel, not only UE)."""
    from ..encoded import idue, unary
    from ..audit import audit
    from ..methods import solve
    from ..notions import IDLDP
    from ..problem import Problem
    from ..utility import Distortion
    L = idue.Levels.make(inputs["epsilons"], inputs["sizes"])
    r = idue.design(L, inputs["model"])
    bound = min(L.epsilons.max(), 2 * L.epsilons.min())
    ue_leak = unary.ldp_leakage(*r.per_item())
    eps_items = L.expand(L.epsilons)
    d = eps_items.size
    prior = np.linspace(1, 2, d) / np.linspace(1, 2, d).sum()
    pr = Problem(prior=prior, privacy=[IDLDP(epsilons=eps_items)], utility=Distortion("hamming"))
    q = solve(pr).channel
    lp_leak = float(audit(pr, q).measures["ldp"])
    measured = max(ue_leak, lp_leak)
    return bound_claim(inputs, measured, bound, {"ue_ldp_leakage": ue_leak, "lp_channel_ldp_leakage": lp_leak})


def _ps_cases(quick: bool) -> list[dict]:
    out = []
    for e, m in (((np.log(4), np.log(6)), (1, 3)), ((0.5, 1.0), (2, 2)), ((1.0, 1.2, 2.0), (1, 1, 2))):
        for l in ((1, 3) if quick else (1, 2, 3, 5)):
            for star in ("min", "max"):
                for model in (("opt2",) if quick else ("opt1", "opt2")):
                    out.append({"epsilons": [float(v) for v in e], "sizes": list(m), "l": l, "dummy_budget": star,
                                "model": model})
    return out


def _ps_audit(inputs):
    from ..encoded import idue, itemset
    L = idue.Levels.make(inputs["epsilons"], inputs["sizes"])
    r = idue.design(L, inputs["model"])
    a, b = r.per_item()
    k = int(np.argmin(L.epsilons) if inputs["dummy_budget"] == "min" else np.argmax(L.epsilons))
    l = inputs["l"]
    aa, bb = np.r_[a, np.full(l, r.a[k])], np.r_[b, np.full(l, r.b[k])]
    eps_items = L.expand(L.epsilons)
    res = itemset.audit_sets(aa, bb, eps_items.size, l, eps_items, float(L.epsilons[k]))
    return res, {"a": aa.tolist(), "b": bb.tolist()}


def _thm4(inputs):
    """ID-LDP Theorem 4: IDUE-PS with a MinID-LDP IDUE channel satisfies MinID-LDP over item sets with
    the budgets of Eq 15, for a dummy budget eps* taken from the items' budgets. Exact audit of every
    pair of item sets of the small domain (encoded.itemset.audit_sets)."""
    res, params = _ps_audit(inputs)
    claimed = {"parameters": params}
    if res["budget_excess"] > VERIFY_TOL:
        x, x2, leak, budget = res["budget_worst"]
        return Outcome("infeasible", inputs, {**claimed, "worst_pair": [x, x2], "budget": budget}, None, leak,
                       res["budget_excess"])
    return Outcome("holds", inputs, claimed, None, None, max(res["budget_excess"], 0.0))


def _lemma2(inputs):
    """ID-LDP Lemma 2 (Eq 13): the bound on Pr(y|x)/Pr(y|x') over item sets, against the exact ratio."""
    res, params = _ps_audit(inputs)
    if res["lemma2_excess"] > VERIFY_TOL:
        x, x2, leak = res["lemma2_worst"]
        return Outcome("infeasible", inputs, {"parameters": params, "worst_pair": [x, x2]}, None, leak,
                       res["lemma2_excess"])
    return Outcome("holds", inputs, {"parameters": params}, None, None, max(res["lemma2_excess"], 0.0))


THEOREMS += [
    Theorem("idldp-table1", f"{CITE} Table I", "toy example eps_1 = ln 4, eps_2..5 = ln 6: total variance RAPPOR 10n, "
            "OUE 9.9n, IDUE (opt0) 8.68n ~ 8.86n", _table_cases, _table,
            corrected=_table_repaired, sample=lambda rng, n: [],     # a printed table: no parameters to redraw
            correction="rounding: the IDUE row is the certified opt0 optimum with its parameters rounded to two "
                       "decimals, its variance coefficients computed from the rounded parameters (each within 0.01), and "
                       "its totals summed from the printed coefficients (3.27n + 4 x 1.32n + 0.31n = 8.86n); the exact "
                       "optimum's worst-case total is 8.5675n"),
    Theorem("idldp-lemma1", f"{CITE} Lemma 1", "E-MinID-LDP implies min(max E, 2 min E)-LDP", _level_cases, _lemma1),
    Theorem("idldp-lemma2", f"{CITE} Lemma 2 (Eq 13)", "IDUE-PS: Pr(y|x)/Pr(y|x') <= (eta_x mean_{i in x} alpha_i + "
            "(1-eta_x) mean alpha*) / (eta_x' mean_{j in x'} beta_j + (1-eta_x') mean beta*)", _ps_cases, _lemma2),
    Theorem("idldp-thm4", f"{CITE} Theorem 4", "IDUE-PS with MinID-LDP IDUE parameters is MinID-LDP over item sets "
            "with the budgets of Eq 15, for any dummy budget eps* among the items' budgets", _ps_cases, _thm4),
]
