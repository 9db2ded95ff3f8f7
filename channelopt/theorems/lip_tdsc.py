"""LIP-TDSC: closed forms and relations of "Local Information Privacy and Its Application to
Privacy-Preserving Data Aggregation"."""

from __future__ import annotations

import numpy as np

from ..closed_forms import bp_lip_binary, rr_latent_binary, rr_lip
from ..estimators import grr_count_mse, grr_count_variance
from ..notions import BPLIP, DI, LDP, LIP
from ..problem import Joint, Problem
from ..utility import Bayes, Distortion
from . import Outcome, Theorem
from .check import VERIFY_TOL, bound_claim, certified_optimum, channel_claim, value_claim
from .grids import clean, dims, eps_grid, intervals, latent_binary, prior_pair_cases, priors

CITE = "LIP-TDSC"


# ---- cases and checks -------------------------------------------------------------------------

def _mse(inputs: dict, notion) -> Problem:
    latent = inputs.get("latent")
    return Problem(prior=inputs["prior"], values=inputs.get("values"), privacy=[notion], utility=Bayes("bayes-mse"),
                   latent=Joint(np.array(latent["prior"]), np.array(latent["conditional"])) if latent else None)


def _prior_cases(quick: bool, binary: bool = False) -> list[dict]:
    ds = [2] if binary else dims(quick)
    return [{"prior": clean(P), "values": list(range(d)), "epsilon": eps}
            for d in ds for P in priors(d, quick) for eps in eps_grid(quick)]


def rr_condition(inputs: dict) -> bool:
    """e^eps - (1 - P_m) <= P_m e^{2 eps} for every m: exactly when Theorem 3's channel is eps-LIP
    (its output m has posterior ratio q[m,m]/P_m at the top)."""
    P, e = np.asarray(inputs["prior"]), np.exp(inputs["epsilon"])
    return bool(np.all(e - (1 - P) <= P * e * e * (1 + 1e-12)))


def _thm3(inputs):
    return channel_claim(inputs, _mse(inputs, LIP(inputs["epsilon"])), rr_lip(inputs["prior"], inputs["epsilon"]))


def _pmin_eps(inputs):
    return (min(inputs["prior"]), inputs["epsilon"])


def _latent_cases(quick: bool) -> list[dict]:
    out = []
    for g, a, b in latent_binary(quick):
        pg = np.array([1 - g, g])
        T = np.array([[1 - a, a], [1 - b, b]])
        out += [{"prior": clean(pg @ T), "values": [0, 1], "epsilon": eps,
                 "latent": {"prior": clean(pg), "conditional": T.tolist()}} for eps in eps_grid(quick)]
    return out


def _thm2(inputs):
    T = np.array(inputs["latent"]["conditional"])
    P1 = inputs["prior"][1]
    q = rr_latent_binary(P1, T[:, 1].max(), T[:, 1].min(), inputs["epsilon"])
    return channel_claim(inputs, _mse(inputs, LIP(inputs["epsilon"])), q)


def _dependent(inputs) -> bool:
    T = np.array(inputs["latent"]["conditional"])
    return bool(T[:, 1].min() < inputs["prior"][1] < T[:, 1].max())


def _prop1_cases(quick: bool) -> list[dict]:
    rng = np.random.default_rng(1)
    out = []
    for d in dims(quick):
        for k in (2, 3):
            R = rng.dirichlet(np.ones(d), size=k)
            pg = rng.dirichlet(np.ones(k))
            u = np.full(d, 1.0 / d)
            for rho in (0.05, 0.2, 0.5, 0.9):
                T = rho * R + (1 - rho) * u[None, :]
                out += [{"prior": clean(pg @ T), "values": list(range(d)), "epsilon": eps,
                         "latent": {"prior": clean(pg), "conditional": T.tolist()}} for eps in eps_grid(quick)]
    return out


def prop1_condition(inputs) -> bool:
    """LIP-TDSC Eq (19) for every x: max_g t_gx / P_x <= e^eps and P_x / min_g t_gx <= e^eps."""
    T, P, e = np.array(inputs["latent"]["conditional"]), np.asarray(inputs["prior"]), np.exp(inputs["epsilon"])
    return bool(np.all(T.max(axis=0) / P <= e) and np.all(P / T.min(axis=0) <= e))


def _prop1(inputs):
    d = len(inputs["prior"])
    return channel_claim(inputs, _mse(inputs, LIP(inputs["epsilon"])), np.eye(d))


def _interval_cases(quick: bool) -> list[dict]:
    return [{"prior_lower": [1 - b, a], "prior_upper": [1 - a, b], "epsilon": eps}
            for a, b in intervals(quick) for eps in eps_grid(quick)]


def _prop2(inputs):
    """Feasibility: exact BP-LIP audit. Optimality (LIP-TDSC Eq 17, worst-case MSE over the interval,
    curator knowing the true prior): on a grid of priors P1 in [a, b], the certified pointwise
    optima opt(P1) give the lower bound max opt(P1) on the minimax value, and each pointwise-optimal
    channel's worst case gives an upper bound. The claim holds if its worst case meets the lower
    bound; it is suboptimal only if some pointwise-optimal channel has a smaller worst case."""
    a, b, eps = inputs["prior_lower"][1], inputs["prior_upper"][1], inputs["epsilon"]
    q = bp_lip_binary(a, b, eps)
    notion = BPLIP(eps, prior_lower=inputs["prior_lower"], prior_upper=inputs["prior_upper"])
    grid = np.linspace(a, b, 9) if b > a else np.array([a])
    problems = [Problem(prior=[1 - p, p], privacy=[notion], utility=Bayes("bayes-mse")) for p in grid]
    worst = lambda ch: max(pr.utility.evaluate(pr, ch) for pr in problems)   # noqa: E731
    first = channel_claim(inputs, problems[len(problems) // 2], q)
    if first.kind == "infeasible":
        return first
    optima = [certified_optimum(pr) for pr in problems]
    lower = max(r.objective for r in optima)
    best = min(optima, key=lambda r: worst(r.channel))
    claimed = worst(q)
    out = {"channel": q.tolist(), "objective": claimed}
    optimum = {"channel": best.channel.tolist(), "objective": worst(best.channel), "lower_bound": lower}
    if claimed - worst(best.channel) > VERIFY_TOL * max(1.0, claimed):
        return Outcome("suboptimal", inputs, out, optimum, first.leakage_of_claim, claimed - worst(best.channel))
    note = "" if claimed <= lower + VERIFY_TOL * max(1.0, lower) else "not refuted: worst case above the grid lower bound"
    return Outcome("holds", inputs, out, optimum, first.leakage_of_claim, max(claimed - lower, 0.0), note)


def _prop4(inputs):
    eps = inputs["epsilon"]
    lip = certified_optimum(_mse(inputs, LIP(eps))).objective
    ldp = certified_optimum(_mse(inputs, LDP(eps))).objective
    return bound_claim(inputs, lip, ldp, {"relation": "E_LIP* <= E_LDP*"})


def _eq41_cases(quick: bool) -> list[dict]:
    return [{"users": 1000, "holders": nv, "d": d, "epsilon": eps}
            for d in dims(quick) for nv in (0, 100, 1000) for eps in eps_grid(quick)]


def _eq41(inputs):
    n, nv, d, eps = inputs["users"], inputs["holders"], inputs["d"], inputs["epsilon"]
    return value_claim(inputs, grr_count_mse(n, d, eps), grr_count_variance(n, nv, d, eps))


def _implication_channels(problem: Problem, eps: float, rng) -> list[np.ndarray]:
    """LIP-feasible channels: optima for Hamming, for bayes-mse, and for two random linear costs."""
    d = problem.d
    problems = [problem, Problem(prior=problem.prior, privacy=problem.privacy, utility=Distortion("hamming"))]
    problems += [Problem(prior=problem.prior, privacy=problem.privacy,
                         utility=Distortion("distortion", matrix=rng.uniform(0, 1, (d, d)))) for _ in range(2)]
    out = [certified_optimum(p).channel for p in problems]
    return [q for q in out if q is not None]                # certified optima all carry a channel


def _implications(inputs):
    """LIP-TDSC §3 and Lemma 3: eps-LIP implies eps-MIP, eps-MIL, 2eps-LDP and (2eps + D_inf)-DI, checked
    on several LIP-feasible channels; the worst ratio of measured leakage to its bound is kept."""
    from ..audit import audit
    eps, P = inputs["epsilon"], np.asarray(inputs["prior"])
    problem = _mse(inputs, LIP(eps))
    dinf = float(np.log(P.max() / P.min()))
    worst = None
    for q in _implication_channels(problem, eps, np.random.default_rng(0)):
        m = audit(problem, q).measures
        for name, bound in (("mip", eps), ("mil", eps), ("ldp", 2 * eps), ("di", 2 * eps + dinf)):
            o = bound_claim(inputs, float(m[name]), bound, {"implied": f"{name} <= {bound:.6g}", "channel": q.tolist()})
            if worst is None or o.gap > worst.gap or (o.kind == "infeasible" and worst.kind == "holds"):
                worst = o
    return worst


def _di_implies_lip(inputs):
    """LIP-TDSC Lemma 3 (second half): eps-DI implies (eps + D_inf)-LIP."""
    from ..audit import audit
    eps, P = inputs["epsilon"], np.asarray(inputs["prior"])
    dinf = float(np.log(P.max() / P.min()))
    problem = _mse(inputs, DI(eps))
    if dinf > eps:     # DI is infeasible when max P / min P > e^eps (no channel to test)
        return Outcome("holds", inputs, {"bound": eps + dinf}, None, None, 0.0, "no eps-DI channel exists")
    q = certified_optimum(problem).channel
    return bound_claim(inputs, float(audit(problem, q).measures["lip"]), eps + dinf, {"channel": q.tolist()})


# ---- encoded mechanisms (LIP-TDSC §4.3, §4.4) -------------------------------------------------------

def _ue_cases(quick: bool) -> list[dict]:
    return [{"prior": clean(P), "epsilon": eps} for d in dims(quick) if d >= 2
            for P in priors(d, quick) for eps in eps_grid(quick)]


def _ue_claim(inputs, priors_, eps):
    """UE-LIP (LIP-TDSC Thm 4 / Cor 2): exact LIP audit of the claimed (q01, q10) under every prior, and
    the certified optimum of Eq 33 (Eq 34: max-min over the priors) from encoded.ue_lip.optimum."""
    from ..encoded import ue_lip, unary
    p, q = ue_lip.theorem4(priors_, eps)
    leak = max(unary.lip_leakage(p, q, P) for P in priors_)
    value = float(min(ue_lip.explained(P, p, q) for P in priors_))
    o = ue_lip.optimum(priors_, eps)
    claimed = {"parameters": {"q01": q, "q10": 1 - p}, "objective": value}
    optimum = {"parameters": {"q01": o.q, "q10": 1 - o.p}, "objective": o.value, "upper_bound": o.bound}
    if leak - eps > VERIFY_TOL * max(1.0, eps):
        return Outcome("infeasible", inputs, claimed, optimum, leak, leak - eps)
    gap = o.value - value
    kind = "suboptimal" if gap > VERIFY_TOL * max(1.0, abs(o.value)) else "holds"
    return Outcome(kind, inputs, claimed, optimum, leak, float(max(gap, 0.0)))


def _thm4(inputs):
    return _ue_claim(inputs, np.atleast_2d(inputs["prior"]), inputs["epsilon"])


_cor2_cases = prior_pair_cases


def _cor2(inputs):
    return _ue_claim(inputs, np.array(inputs["priors"]), inputs["epsilon"])


def _prop3_cases(quick: bool) -> list[dict]:
    rng = np.random.default_rng(3)
    out = []
    for d in (range(3, 6) if quick else range(3, 8)):
        for P in priors(d, quick):
            for g in sorted({2, d - 1}):
                h = rng.integers(0, g, size=d)
                h[:g] = np.arange(g)                     # every hashed value is hit
                out += [{"prior": clean(P), "hash": h.tolist(), "g": g, "epsilon": eps} for eps in eps_grid(quick)]
    return out


def _prop3(inputs):
    """LIP-TDSC Prop 3: RR-LIP on the hashed prior P'. With h known, LIP of X equals LIP of X' (Eq 27,
    tested in tests/test_encoded.py) and E[X|Y,h] = E[m_X'|Y] with m_x' = E[X | X' = x'], so Eq 29 is
    the MMSE problem on X' with values m: the claim is checked there (certified posterior LP)."""
    from ..encoded import hashing
    P, h, g = np.asarray(inputs["prior"]), np.asarray(inputs["hash"]), inputs["g"]
    Ph = hashing.hashed_prior(P, h, g)
    m = np.bincount(h, weights=P * np.arange(P.size), minlength=g) / Ph
    problem = Problem(prior=Ph, values=m, privacy=[LIP(inputs["epsilon"])], utility=Bayes("bayes-mse"))
    return channel_claim(inputs, problem, hashing.rr_lip(Ph, inputs["epsilon"]), {"hashed_prior": clean(Ph)})


def _prop3_condition(inputs) -> bool:
    from ..encoded import hashing
    Ph = hashing.hashed_prior(inputs["prior"], inputs["hash"], inputs["g"])
    return rr_condition({"prior": Ph, "epsilon": inputs["epsilon"]})


def _eq35(inputs):
    """LIP-TDSC Eq 35 (q01_LIP - q01_OUE = P_min (1 - e^eps) / ((e^eps - 2 P_min + 1)(e^eps + 1)) <= 0) and
    its reading "UE-LIP (Thm 4) always has a smaller error (Eq 30) than OUE-LDP"."""
    from ..encoded import ue_lip, unary
    P, eps = np.asarray(inputs["prior"]), inputs["epsilon"]
    e, pmin = np.exp(eps), P.min()
    p4, q4 = ue_lip.theorem4(P, eps)
    po, qo = unary.oue(eps)
    claimed = pmin * (1 - e) / ((e - 2 * pmin + 1) * (e + 1))
    if abs((q4 - qo) - claimed) > VERIFY_TOL:
        return value_claim(inputs, claimed, q4 - qo)
    return bound_claim(inputs, ue_lip.mse(P, p4, q4), ue_lip.mse(P, po, qo),
                       {"relation": "Eq 30 error of UE-LIP (Thm 4) <= that of OUE-LDP"})


THEOREMS = [
    Theorem("tdsc-thm3", f"{CITE} Theorem 3", "RR-LIP q[m,m] = 1-(1-P_m)/e^eps, q[m,k] = P_k/e^eps minimizes the "
            "MMSE of X under eps-LIP (M-ary, G = X)", _prior_cases, _thm3, conditions="none stated",
            axes=("min prior", "epsilon"), coords=_pmin_eps,
            candidates=(("the smallest prior mass P_min >= 1/(e^eps + 1) (equivalently e^eps - (1 - P_m) <= P_m e^(2 eps) "
                         "for every m)", rr_condition),)),
    Theorem("tdsc-thm2", f"{CITE} Theorem 2", "binary RR with a binary latent G: q0*, q1* of Theorem 2 minimize "
            "the MMSE of X under eps-LIP w.r.t. G", _latent_cases, _thm2,
            conditions="X and G dependent (t_lower < P1 < t_upper)", applies=_dependent,
            axes=("Pr(X=1)", "epsilon"), coords=lambda i: (i["prior"][1], i["epsilon"]),
            candidates=(("Eq (19) holds for both x (direct release is eps-LIP)", prop1_condition),)),
    Theorem("tdsc-prop1", f"{CITE} Proposition 1", "if Eq (19) holds for every x, direct release Y = X is optimal",
            _prop1_cases, _prop1, conditions="Eq (19) for every x", applies=prop1_condition),
    Theorem("tdsc-prop2", f"{CITE} Proposition 2", "BP-LIP with Pr(X=1) in [a, b]: q01 = b/(b-a+e^eps), "
            "q10 = (1-a)/(b-a+e^eps) minimize the worst-case MMSE over the interval", _interval_cases, _prop2,
            axes=("interval width", "epsilon"),
            coords=lambda i: (i["prior_upper"][1] - i["prior_lower"][1], i["epsilon"]),
            candidates=(("min(a, 1 - b) >= 1/(e^eps + 1) for the interval [a, b] of P1 (equivalently "
                         "e^eps - (1 - P_m) <= P_m e^(2 eps) for both symbols at both ends)",
                         lambda i: all(rr_condition({"prior": [1 - p, p], "epsilon": i["epsilon"]})
                                       for p in (i["prior_lower"][1], i["prior_upper"][1]))),)),
    Theorem("tdsc-prop4", f"{CITE} Proposition 4", "for a fixed prior the optimal LIP MSE is at most the optimal "
            "LDP MSE", _prior_cases, _prop4),
    Theorem("tdsc-eq41", f"{CITE} Eq 41 (LIP-CNS Eq 42 for d = 2)", "context-free GRR count estimator has MSE "
            "N (d - 2 + e^eps) / (e^eps - 1)^2", _eq41_cases, _eq41,
            candidates=(("no user holds the counted symbol (n_v = 0)", lambda i: i["holders"] == 0),)),
    Theorem("tdsc-lip-implies", f"{CITE} §3.4 and Lemma 3", "eps-LIP implies eps-MIP, eps-MIL, 2eps-LDP, "
            "(2eps + D_inf)-DI", _prior_cases, _implications),
    Theorem("tdsc-lemma3-di", f"{CITE} Lemma 3", "eps-DI implies (eps + D_inf)-LIP", _prior_cases, _di_implies_lip),
    Theorem("tdsc-thm4", f"{CITE} Theorem 4", "UE-LIP: q01 = (1 - P_min)/(e^eps - 2 P_min + 1), q10 = 1/2 maximize "
            "sum_k Var[E[U^k|Y^k]] (Eq 33) under eps-LIP", _ue_cases, _thm4,
            axes=("min prior", "epsilon"), coords=_pmin_eps),
    Theorem("tdsc-cor2", f"{CITE} Corollary 2", "UE-LIP with a prior set: Theorem 4 with the smallest P_min over the "
            "set maximizes the worst-case Eq 33 objective (Eq 34)", _cor2_cases, _cor2),
    Theorem("tdsc-prop3", f"{CITE} Proposition 3", "LH-LIP: RR-LIP on the hashed prior, q[x',x'] = 1 - (1 - P'_x')/e^eps, "
            "q[x',y] = P'_y/e^eps, is optimal for Eq 29 under eps-LIP", _prop3_cases, _prop3,
            axes=("min hashed prior", "epsilon"),
            coords=lambda i: (float(np.bincount(i["hash"], weights=i["prior"], minlength=i["g"]).min()), i["epsilon"]),
            candidates=(("every hashed value m has mass P'_m >= 1/(e^eps + 1) (equivalently "
                         "e^eps - (1 - P'_m) <= P'_m e^(2 eps))", _prop3_condition),)),
    Theorem("tdsc-eq35", f"{CITE} Eq 35 and §4.4", "q01(UE-LIP) - q01(OUE) = P_min(1 - e^eps)/((e^eps - 2P_min + 1)"
            "(e^eps + 1)) <= 0, so UE-LIP has a smaller error than OUE-LDP", _ue_cases, _eq35),
]
