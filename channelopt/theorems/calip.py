"""CA-LIP: "Context-Aware Local Information Privacy". Its RR-LIP closed form (Eq 19) is the
one of LIP-TDSC Theorem 3 and is verified under that id; the relations of §II-III are registered here,
each judged against the exact quantity from channelopt.relations.
"""

from __future__ import annotations

import numpy as np

from ..closed_forms import example1, ldp_to_lip, prop1_bound, thm4_bound
from ..relations import (composed_leakage, di_cone, eta, ldp_cone, ldp_leakage_of, lip_cone, lip_leakage_of, rays,
                         repeated_leakage, sup_approx, tv)
from . import Outcome, Theorem
from .check import VERIFY_TOL, bound_claim, value_claim
from .grids import clean, dims, eps_grid, prior_pair_cases, priors

CITE = "CA-LIP"


def _cases(quick: bool) -> list[dict]:
    return [{"prior": clean(P), "epsilon": eps} for d in dims(quick) for P in priors(d, quick)
            for eps in eps_grid(quick)]


def _exact_vs_bound(inputs, exact: float, bound: float, relation: str):
    o = bound_claim(inputs, exact, bound, {"relation": relation})
    o.note = f"exact {exact:.6g}"
    return o


def _thm1(inputs):
    """eps~(P) of Eq 9, exactly (LP over the LIP cone), against Prop 1's closed bound; the outcome
    also records how loose Prop 1 is (bound - exact)."""
    P, eps = np.asarray(inputs["prior"]), inputs["epsilon"]
    exact = ldp_leakage_of(lip_cone(P, eps), P.size)
    bound = prop1_bound(P, eps)
    o = bound_claim(inputs, exact, bound, {"relation": "eps-LIP => eps~(P)-LDP <= Prop 1"})
    o.note = f"exact eps~(P) = {exact:.6g}, Prop 1 = {bound:.6g}"
    return o


def _thm1_converse(inputs):
    P, eps = np.asarray(inputs["prior"]), inputs["epsilon"]
    exact = lip_leakage_of(ldp_cone(P.size, eps), P)
    return _exact_vs_bound(inputs, exact, ldp_to_lip(P.min(), eps), "eps-LDP => ln(P_min + e^eps(1-P_min))-LIP")


_bp_cases = prior_pair_cases


def _thm2(inputs):
    """CA-LIP Thm 2 both ways, exactly: the LIP leakage of eps-LDP channels under every prior of the
    set, and the LDP leakage of channels that are eps-LIP for every prior of the set (intersection
    of the cones). The worse of the two relative excesses is reported."""
    Ps, eps = np.asarray(inputs["priors"]), inputs["epsilon"]
    d = Ps.shape[1]
    fwd = max(lip_leakage_of(ldp_cone(d, eps), P) for P in Ps)
    fwd_bound = ldp_to_lip(Ps.min(), eps)
    back = ldp_leakage_of(np.vstack([lip_cone(P, eps) for P in Ps]), d)
    max_pmin = Ps.min(axis=1).max()
    back_bound = float(min(2 * eps, np.log((np.exp(eps) - 1 + max_pmin) / max_pmin)))
    a = bound_claim(inputs, fwd, fwd_bound, {"relation": "eps-LDP => BP-LIP"})
    b = bound_claim(inputs, back, back_bound, {"relation": "eps-BP-LIP => LDP"})
    return max((a, b), key=lambda o: (o.kind == "infeasible", o.gap))


def _thm3_di(inputs):
    """CA-LIP Thm 3(1): eps-LIP => (2 eps + D_inf)-DI and eps-DI => ln[P_min + (1 - P_min) e^(eps + D_inf)]-LIP,
    both exactly over the cones (the second only when an eps-DI channel exists: D_inf <= eps)."""
    P, eps = np.asarray(inputs["prior"]), inputs["epsilon"]
    dinf = float(np.log(P.max() / P.min()))
    di = ldp_leakage_of(lip_cone(P, eps), P.size, weights=P)
    a = bound_claim(inputs, di, 2 * eps + dinf, {"relation": "eps-LIP => (2 eps + D_inf)-DI"})
    if dinf >= eps:
        a.note = "eps-DI admits no channel (D_inf >= eps): converse vacuous"
        return a
    lip = lip_leakage_of(di_cone(P, eps), P)
    b = bound_claim(inputs, lip, float(np.log(P.min() + (1 - P.min()) * np.exp(eps + dinf))),
                    {"relation": "eps-DI => ln[P_min + (1-P_min) e^(eps + D_inf)]-LIP"})
    return max((a, b), key=lambda o: (o.kind == "infeasible", o.gap))


# ---- composition (Thm 4, Cor 4, Cor 5) ---------------------------------------------------------


FIG5_PRIORS = ([0.25, 0.25, 0.25, 0.25], [0.1, 0.1, 0.1, 0.7], [0.01, 0.33, 0.33, 0.33])


def _comp_cases(quick: bool) -> list[dict]:
    ps = [list(p) for p in FIG5_PRIORS] + [clean(P) for d in (2, 3) for P in priors(d, quick)]
    eps_sets = ([2.0, 2.0], [0.5, 1.0, 2.0], [5.0, 5.0]) if quick else \
        ([0.5, 0.5], [2.0, 2.0], [5.0, 5.0], [2.0, 2.0, 2.0], [0.1, 1.0, 3.0], [5.0, 5.0, 5.0])
    return [{"prior": P, "epsilons": list(e)} for P in ps for e in eps_sets]


def _thm4(inputs):
    P, eps = np.asarray(inputs["prior"]), inputs["epsilons"]
    exact = repeated_leakage([rays(lip_cone(P, e), P) for e in eps], P)
    return _exact_vs_bound(inputs, exact, thm4_bound(P.min(), eps), "L_LIP(X; Y_1..Y_n) <= Thm 4 bound")


def _cor4_cases(quick: bool) -> list[dict]:
    sets = ([FIG5_PRIORS[0], FIG5_PRIORS[1]], [FIG5_PRIORS[1], FIG5_PRIORS[2]], [FIG5_PRIORS[0], FIG5_PRIORS[2]])
    eps_sets = ([2.0, 2.0], [5.0, 5.0]) if quick else ([0.5, 0.5], [2.0, 2.0], [5.0, 5.0], [2.0, 2.0, 2.0])
    return [{"priors": [list(p) for p in s], "epsilons": list(e)} for s in sets for e in eps_sets]


def _cor4(inputs):
    Ps, eps = np.asarray(inputs["priors"]), inputs["epsilons"]
    R = [rays(np.vstack([lip_cone(P, e) for P in Ps]), Ps[0]) for e in eps]
    exact = max(repeated_leakage(R, P) for P in Ps)
    bound = thm4_bound(Ps.min(), eps, pmin_omega=Ps.min(axis=1).max())
    return _exact_vs_bound(inputs, exact, bound, "L_BP-LIP(X; Y_1..Y_n) <= Cor 4 bound")


def _cor5_cases(quick: bool) -> list[dict]:
    rng = np.random.default_rng(5)
    out = []
    for shape in ((2, 2), (2, 3), (3, 3), (2, 2, 2)) if not quick else ((2, 2), (2, 2, 2)):
        for conc in (0.3, 3.0):
            J = rng.dirichlet(np.full(int(np.prod(shape)), conc)).reshape(shape)
            J = np.maximum(J, 1e-4)
            J /= J.sum()
            for e in ((1.0,), (3.0,), (0.5, 2.0)):
                eps = [e[k % len(e)] for k in range(len(shape))]
                out.append({"joint": J.tolist(), "epsilons": eps})
    return out


def _cor5(inputs):
    """CA-LIP Cor 5: X_1..X_n correlated, Y_k from X_k by an eps_k-LIP mechanism (w.r.t. X_k's marginal)."""
    J, eps = np.asarray(inputs["joint"]), inputs["epsilons"]
    n = J.ndim
    margins = [J.sum(axis=tuple(i for i in range(n) if i != k)) for k in range(n)]
    R = [rays(lip_cone(Pk, e), Pk) for Pk, e in zip(margins, eps)]
    exact = composed_leakage(R, J)
    pmin_k = [float(Pk.min()) for Pk in margins]
    omega = sum(min(2 * e, np.log((np.exp(e) - 1 + p) / p)) for e, p in zip(eps, pmin_k))
    jmin = float(J.min())
    bound = float(np.log(jmin + np.exp(omega) * (1 - jmin)))
    return _exact_vs_bound(inputs, exact, bound, "L_LIP(X^n; Y^n) <= Eq 11")


# ---- transferability (Lemma 3, Eq 12, Cor 6, Cor 8) ----------------------------------------------

def _transfer_cases(quick: bool) -> list[dict]:
    rng = np.random.default_rng(8)
    out = []
    for d in dims(quick):
        for P in priors(d, quick):
            for scale in (0.02, 0.3):                  # nearby and distant second priors
                Q = np.maximum(P + scale * (rng.dirichlet(np.ones(d)) - 1 / d), 1e-3)
                Q /= Q.sum()
                out += [{"prior": clean(P), "other": clean(Q), "epsilon": eps} for eps in eps_grid(quick)]
    return out


def _lemma3(inputs):
    """Both directions exactly: the largest LIP leakage under P2 of a mechanism that is eps-LIP under
    P1 (an LP over the P1 cone) must be at most eps + eta, and symmetrically."""
    P1, P2, eps = np.asarray(inputs["prior"]), np.asarray(inputs["other"]), inputs["epsilon"]
    e = eta(P1, P2)
    a = lip_leakage_of(lip_cone(P1, eps), P2)
    b = lip_leakage_of(lip_cone(P2, eps), P1)
    worst = max(a, b)
    o = bound_claim(inputs, worst, eps + e, {"relation": "|L(M, P1) - L(M, P2)| <= eta", "eta": e})
    o.note = f"sup L(M, P2) over eps-LIP(P1) mechanisms = {a:.6g}; reverse {b:.6g}"
    return o


def _eq12(inputs):
    """Eq 12: L(M(P1), P2) <= min[eta + eps, 2 eps, ln((e^eps - 1 + P1_min)/P1_min)] for M eps-LIP under P1."""
    P1, P2, eps = np.asarray(inputs["prior"]), np.asarray(inputs["other"]), inputs["epsilon"]
    exact = lip_leakage_of(lip_cone(P1, eps), P2)
    bound = min(eta(P1, P2) + eps, prop1_bound(P1, eps))
    return bound_claim(inputs, exact, bound, {"relation": "Eq 12"})


def _cor6(inputs, log_phi: bool = False):
    """Cor 6: eta + eps is the smallest term of Eq 12 iff D_TV <= c (e^{min(eps, Phi)} - 1) with
    Phi = (e^eps - 1 + P1_min)/P1_min - eps as printed (`log_phi`: Phi = ln(...) - eps, the third
    term of Eq 12 less eps). Judged against the direct comparison."""
    P1, P2, eps = np.asarray(inputs["prior"]), np.asarray(inputs["other"]), inputs["epsilon"]
    p1 = P1.min()
    c = min(p1, P2.min())
    phi = (np.log if log_phi else (lambda v: v))((np.exp(eps) - 1 + p1) / p1) - eps
    printed = tv(P1, P2) <= c * (np.exp(min(eps, phi)) - 1)
    terms = [eta(P1, P2) + eps, 2 * eps, np.log((np.exp(eps) - 1 + p1) / p1)]
    actual = terms[0] <= min(terms[1:])
    claimed = {"condition_holds": bool(printed), "phi": float(phi)}
    kind = "holds" if printed == actual else "infeasible"
    return Outcome(kind, inputs, claimed, {"eta_plus_eps_smallest": bool(actual), "terms": [float(t) for t in terms]},
                   None, float(abs(terms[0] - min(terms[1:]))) if kind != "holds" else 0.0)


def _eps_below_phi(inputs) -> bool:
    p1, eps = min(inputs["prior"]), inputs["epsilon"]
    return eps <= (np.exp(eps) - 1 + p1) / p1 - eps


def _cor8_cases(quick: bool) -> list[dict]:
    out = []
    for c in _transfer_cases(quick)[:: 3 if quick else 2]:
        P, Q = np.asarray(c["prior"]), np.asarray(c["other"])
        mid = (P + Q) / 2
        out.append({"family": [c["prior"], clean(mid)], "true": c["other"], "epsilon": c["epsilon"]})
    return out


def _cor8(inputs):
    """Cor 8: a mechanism that is eps-LIP for every prior of a family leaks at most eps + eta under the
    true prior, eta = log[1 + max_i D_TV(P_true, P_i) / min_i min(P_true_min, P_i_min)] (exact LP)."""
    F, T, eps = np.asarray(inputs["family"]), np.asarray(inputs["true"]), inputs["epsilon"]
    e = float(np.log(1 + max(tv(T, P) for P in F) / min(min(T.min(), P.min()) for P in F)))
    exact = lip_leakage_of(np.vstack([lip_cone(P, eps) for P in F]), T)
    return bound_claim(inputs, exact, eps + e, {"relation": "L(M, P_true) <= eps + eta (Eq 15)", "eta": e})


def _cor7_cases(quick: bool) -> list[dict]:
    return [{"prior": P, "samples": n, "beta": 0.01, "epsilon": e}
            for P in ([0.3, 0.7], [0.2, 0.3, 0.5]) for n in ((50, 500) if quick else (20, 50, 200, 1000, 5000))
            for e in ((1.0,) if quick else (0.5, 1.0, 3.0))]


def _cor7(inputs):
    """CA-LIP Cor 7: with probability >= 1 - beta the discrepancy |L(M(P^), P^) - L(M(P^), P)| of a
    mechanism designed on the empirical prior P^ (here RR-LIP, Eq 19) is at most
    eta = ln(1 + Dbar / (2c)), Dbar = sqrt(2/n (|X| - ln beta)), c = min(P^_min, P_min). Monte-Carlo
    with 2,000 seeded draws of P^; a draw with an unseen symbol has c = 0, so eta is infinite and the
    bound holds there (vacuously); the claim fails if the failure rate exceeds beta by more than 3
    standard errors."""
    from .lip_tdsc import rr_lip
    P, n, beta, eps = np.asarray(inputs["prior"]), inputs["samples"], inputs["beta"], inputs["epsilon"]
    rng = np.random.default_rng(7)
    bar = np.sqrt(2 / n * (P.size - np.log(beta)))
    fails, draws = 0, 2000
    for _ in range(draws):
        Ph = rng.multinomial(n, P) / n
        if np.any(Ph == 0):                      # c = 0: eta = +inf, the bound holds
            continue
        q = rr_lip(Ph, eps)                      # all entries > 0: the LIP leakage is max |ln q / lambda|
        lip = lambda prior, q=q: float(np.abs(np.log(q) - np.log(prior @ q)).max())     # noqa: E731
        e = np.log(1 + bar / (2 * min(Ph.min(), P.min())))
        fails += abs(lip(Ph) - lip(P)) > e
    rate = fails / draws
    se = np.sqrt(beta * (1 - beta) / draws)
    return bound_claim(inputs, float(rate), float(beta + 3 * se), {"relation": "Pr(discrepancy > eta) <= beta"})


# ---- approximate LIP / LDP (Cor 3) --------------------------------------------------------------

def _cor3_cases(quick: bool) -> list[dict]:
    ps = ([0.5, 0.5], [0.2, 0.3, 0.5]) if quick else ([0.5, 0.5], [0.1, 0.9], [0.2, 0.3, 0.5], [0.01, 0.49, 0.5])
    return [{"prior": list(P), "epsilon": eps, "delta": dl, "outputs": m, "form": form}
            for P in ps for eps in ((0.1, 1.0) if quick else (0.1, 1.0, 3.0)) for dl in (0.01, 0.1)
            for m in ((2, 4) if quick else (2, 3, 4, 6)) for form in ("set", "pointwise")]


def _cor3(inputs):
    """CA-LIP Cor 3 both ways, exactly for channels with the given number of outputs: (eps, delta)-LDP =>
    (eps, delta)-LIP, and (eps, delta)-LIP => (2 eps, (e^eps + 1) delta)-LDP. `form` is the LIP
    definition used: Def 5's sets (Eq 3) or Eq 4's pointwise inequalities (the paper calls them
    equivalent for discrete data). LDP is Def 1 (sets) throughout."""
    P, eps, dl, m, form = (np.asarray(inputs["prior"]), inputs["epsilon"], inputs["delta"], inputs["outputs"],
                           inputs["form"])
    fwd = sup_approx(P, eps, dl, m, "ldp", "set", "lip", eps, measure_form=form)
    back = sup_approx(P, eps, dl, m, "lip", form, "ldp", 2 * eps)
    a = bound_claim(inputs, fwd, dl, {"relation": "(eps, delta)-LDP => (eps, delta)-LIP"})
    b = bound_claim(inputs, back, (np.exp(eps) + 1) * dl,
                    {"relation": "(eps, delta)-LIP => (2 eps, (e^eps + 1) delta)-LDP"})
    return max((a, b), key=lambda o: (o.kind == "infeasible", o.gap))


# ---- Example 1 ---------------------------------------------------------------------------------


def _ex1_cases(quick: bool) -> list[dict]:
    qs = (0.05, 0.3, 0.45, 0.7) if quick else (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.55, 0.7, 0.9)
    return [{"P": P, "q": q, "measure": m} for P in (0.5, 0.2) for q in qs for m in ("ldp", "lip", "mil", "mip")]


def _ex1(inputs, printed=example1):
    from ..audit import measures
    from ..problem import Problem
    from ..notions import LDP
    P, q = inputs["P"], inputs["q"]
    ch = np.array([[1 - q, q], [q, 1 - q]])
    exact = measures(Problem(prior=[1 - P, P], privacy=[LDP(50.0)]), ch)[inputs["measure"]]
    claimed = printed(P, q)[inputs["measure"]]
    o = value_claim(inputs, claimed, float(exact))
    o.kind = "holds" if abs(claimed - exact) <= VERIFY_TOL * max(1.0, abs(exact)) else "infeasible"
    return o


def _ex1_repaired(P: float, q: float) -> dict:
    """Example 1 with L_LIP repaired: the log of the largest of the printed ratios Pr(y)/Pr(y|x)
    and their inverses (the printed expression lost the log and the inverse ratios)."""
    out = example1(P, q)
    y1 = P * (1 - q) + (1 - P) * q
    ratios = np.array([y1 / q, y1 / (1 - q), (1 - y1) / q, (1 - y1) / (1 - q)])
    out["lip"] = float(np.log(max(ratios.max(), (1 / ratios).max())))
    return out


# ---- continuous-valued mechanisms (§IV-C) ------------------------------------------------------

def _prop2_cases(quick: bool) -> list[dict]:
    return [{"epsilon": e, "delta": d, "definition": form} for e in eps_grid(quick)
            for d in ((0.0, 0.01, 0.3) if quick else (0.0, 1e-4, 0.01, 0.1, 0.3, 0.6, 0.9)) for form in ("def5", "cor9")]


def _prop2(inputs):
    """CA-LIP Prop 2: the sampling mechanism's lambda = min{delta e^eps, 1 - e^-eps + delta e^-eps}.
    Its exact deltas (the atom and the continuous part, continuous.mechanisms.sampling_deltas) under
    Def 5 and under Cor 9; the largest feasible lambda is found by bisection on the exact deltas."""
    from ..continuous.mechanisms import sampling_deltas, sampling_lambda
    eps, delta, form = inputs["epsilon"], inputs["delta"], inputs["definition"]
    lam = sampling_lambda(eps, delta)
    got = sampling_deltas(lam, eps)[form]
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sampling_deltas(mid, eps)[form] <= delta else (lo, mid)
    claimed = {"parameters": {"lambda": lam}, "objective": lam}
    optimum = {"parameters": {"lambda": lo}, "objective": lo}
    if got > delta + VERIFY_TOL:
        return Outcome("infeasible", inputs, claimed, optimum, got, got - delta)
    kind = "suboptimal" if lo - lam > VERIFY_TOL else "holds"
    return Outcome(kind, inputs, claimed, optimum, got, max(lo - lam, 0.0))


def _gauss_cases(quick: bool) -> list[dict]:
    rng = np.random.default_rng(44)
    out = []
    for _ in range(12 if quick else 60):
        m1, m2 = rng.normal(0, 3, 2)
        s1, s2 = np.sort(rng.uniform(0.3, 4, 2))[::-1]
        out.append({"mu1": float(m1), "s1": float(s1), "mu2": float(m2), "s2": float(s2),
                    "gamma": float(np.exp(rng.uniform(-3, 3)))})
    return out


def _lemma4(inputs):
    """CA-LIP Lemma 4 (s1 >= s2) against adaptive quadrature of (f - gamma g)^+; Prop 3's identity is
    checked in the same case with gamma = e^eps."""
    from scipy.stats import norm
    from ..continuous import egamma
    m1, s1, m2, s2, g = (inputs[k] for k in ("mu1", "s1", "mu2", "s2", "gamma"))
    quad = egamma.numerical(lambda y: norm.pdf(y, m1, s1), lambda y: norm.pdf(y, m2, s2), g,
                            min(m1, m2) - 40 * s1, max(m1, m2) + 40 * s1, points=[m1, m2])
    try:
        claimed = egamma.lemma4(m1, s1, m2, s2, g)
    except Exception:           # no crossing points: Lemma 4 does not apply; compare the general closed form
        claimed = egamma.gaussian(m1, s1, m2, s2, g)
    o = value_claim(inputs, claimed, quad)
    o.kind = "holds" if abs(claimed - quad) <= 1e-6 else "infeasible"
    return o


def _prop3(inputs):
    from scipy.stats import norm
    from ..continuous import egamma
    m1, s1, m2, s2 = (inputs[k] for k in ("mu1", "s1", "mu2", "s2"))
    eps = float(np.log(inputs["gamma"])) if inputs["gamma"] > 1 else float(-np.log(inputs["gamma"]))
    f = lambda y: norm.pdf(y, m1, s1)      # noqa: E731
    g = lambda y: norm.pdf(y, m2, s2)      # noqa: E731
    lo, hi = min(m1, m2) - 40 * max(s1, s2), max(m1, m2) + 40 * max(s1, s2)
    lhs = egamma.numerical(f, g, np.exp(eps), lo, hi, points=[m1, m2])
    rhs = egamma.prop3_rhs(egamma.numerical(g, f, np.exp(-eps), lo, hi, points=[m1, m2]), eps)
    o = value_claim(inputs, rhs, lhs)
    o.kind = "holds" if abs(lhs - rhs) <= 1e-6 else "infeasible"
    return o


def _thm5_cases(quick: bool) -> list[dict]:
    out = []
    for sx, sn in (((5.0, 10.0), (1.0, 3.0)) if quick else ((5.0, 10.0), (1.0, 3.0), (2.0, 1.0), (5.0, 20.0))):
        for eps in (eps_grid(quick)[1:]):
            out.append({"mu_x": 0.0, "sigma_x": sx, "sigma_n": sn, "epsilon": eps, "range": [-2 * sx, 2 * sx]})
    return out


def _thm5(inputs):
    """CA-LIP Thm 5: the delta of the Gaussian mechanism, sup over the data range, against a numerical
    audit that discretizes X and Y (continuous.audit) at the maximizing x and at the range ends."""
    from scipy.stats import norm
    from ..continuous import audit
    from ..continuous.mechanisms import gaussian_delta
    mu, sx, sn, eps = inputs["mu_x"], inputs["sigma_x"], inputs["sigma_n"], inputs["epsilon"]
    lo, hi = inputs["range"]
    d, x = gaussian_delta(sn, mu, sx, eps, lo, hi)
    sy = np.hypot(sx, sn)
    xg = np.linspace(mu - 12 * sx, mu + 12 * sx, 1201)
    yg = np.linspace(mu - 14 * sy - abs(x), mu + 14 * sy + abs(x), 12001)
    num = audit.deltas(xg, norm.pdf(xg, mu, sx), audit.gaussian_cond(sn), yg, eps, [x, lo, hi]).max()
    o = value_claim(inputs, d, float(num), {"argmax_x": x})
    o.kind = "holds" if abs(d - num) <= 1e-4 else "infeasible"
    return o


def _cor10_cases(quick: bool) -> list[dict]:
    return [{"x": x, "mu_x": 0.0, "sigma_x": 5.0, "epsilon": e, "delta": dl}
            for x in (0.0, 5.0, 10.0) for e in ((1.0,) if quick else (0.5, 1.0, 2.0)) for dl in (1e-4, 1e-2)]


def _cor10(inputs):
    """CA-LIP Cor 10: the smallest sigma_N meeting delta at x. Feasible (closed-form E_gamma <= delta) and
    minimal (sigma_N (1 - 1e-6) violates it)."""
    from ..continuous.mechanisms import gaussian_deltas, gaussian_sigma
    x, mu, sx, eps, dl = (inputs[k] for k in ("x", "mu_x", "sigma_x", "epsilon", "delta"))
    s = gaussian_sigma(x, mu, sx, eps, dl)
    at = max(gaussian_deltas(x, s, mu, sx, eps))
    below = max(gaussian_deltas(x, s * (1 - 1e-6), mu, sx, eps))
    claimed = {"parameters": {"sigma_N": s}, "delta_at": at, "delta_below": below}
    if at > dl * (1 + 1e-6):
        return Outcome("infeasible", inputs, claimed, None, at, at - dl)
    kind = "holds" if below > dl else "suboptimal"
    return Outcome(kind, inputs, claimed, None, at, 0.0)


def _thm6_cases(quick: bool) -> list[dict]:
    out = []
    for s in ((0.2,) if quick else (0.0, 0.2, 0.5)):
        P = [1 / 3 + s / 2, 1 / 3, 1 / 3 - s / 2]
        for e in eps_grid(quick):
            out.append({"prior": P, "values": [0.0, 1.0, 2.0], "epsilon": e, "range": [-4.0, 6.0]})
    return out


def _thm6(inputs):
    """CA-LIP Thm 6 (Eq 25): the instance-independent Laplace scale meets eps-LIP (numerical audit of
    the truncated mechanism on [l, u]). Eq 26 needs alpha_eps, which the paper leaves implicit: the
    outcome records the largest alpha_eps passing the same audit."""
    from ..continuous.mechanisms import laplace_alpha, laplace_indep, laplace_lip_leakage
    P, vals, eps = np.asarray(inputs["prior"]), np.asarray(inputs["values"]), inputs["epsilon"]
    lo, hi = inputs["range"]
    D = float(vals.max() - vals.min())
    b = laplace_indep(P, D, eps)
    leak = laplace_lip_leakage(P, vals, np.full(P.size, b), lo, hi)
    o = bound_claim(inputs, leak, eps, {"parameters": {"b": b}})
    o.claimed["alpha_eps_largest_passing"] = laplace_alpha(P, vals, D, eps, lo, hi)
    return o


THEOREMS = [
    Theorem("calip-thm1", f"{CITE} Theorem 1 and Proposition 1", "eps-LIP implies eps~(P)-LDP (Eq 9) with "
            "eps~(P) <= min{2 eps, ln((e^eps - 1 + P_min)/P_min)}", _cases, _thm1,
            axes=("min prior", "epsilon"), coords=lambda i: (min(i["prior"]), i["epsilon"])),
    Theorem("calip-thm1-converse", f"{CITE} Theorem 1 (converse)", "eps-LDP implies ln(P_min + e^eps (1 - P_min))-LIP",
            _cases, _thm1_converse),
    Theorem("calip-thm2", f"{CITE} Theorem 2", "eps-LDP implies ln(min P_min + e^eps(1 - min P_min))-BP-LIP; "
            "eps-BP-LIP implies min{2 eps, ln((e^eps - 1 + max P_min)/max P_min)}-LDP", _bp_cases, _thm2),
    Theorem("calip-thm3-di", f"{CITE} Theorem 3 (1)", "eps-LIP implies (2 eps + D_inf)-DI; eps-DI implies "
            "ln[P_min + (1 - P_min) e^(eps + D_inf)]-LIP", _cases, _thm3_di),
    Theorem("calip-cor3", f"{CITE} Corollary 3", "(eps, delta)-LDP implies (eps, delta)-LIP; (eps, delta)-LIP implies "
            "(2 eps, (e^eps + 1) delta)-LDP", _cor3_cases, _cor3,
            conditions="Def 5 (sets); the paper states Eq 4 (pointwise) is equivalent for discrete data",
            candidates=(("LIP in the set form of Def 5 (Eq 3)", lambda i: i["form"] == "set"),
                        ("at most 2 outputs", lambda i: i["outputs"] <= 2))),
    Theorem("calip-thm4", f"{CITE} Theorem 4", "n independent eps_k-LIP releases of X leak at most "
            "ln(P_min + exp(sum_k min{2 eps_k, ln((e^eps_k - 1 + P_min)/P_min)})(1 - P_min))", _comp_cases, _thm4),
    Theorem("calip-cor4", f"{CITE} Corollary 4", "composition of eps_k-BP-LIP releases: the Thm 4 bound with "
            "min P_min^bp outside and max P_min^bp in omega_k", _cor4_cases, _cor4),
    Theorem("calip-cor5", f"{CITE} Corollary 5 (Eq 11)", "sequential release of a correlated X_1..X_n, Y_k from X_k "
            "eps_k-LIP: total leakage at most Eq 11", _cor5_cases, _cor5),
    Theorem("calip-lemma3", f"{CITE} Lemma 3", "|L(M(P1), P1) - L(M(P1), P2)| <= ln(1 + D_TV / min(P1_min, P2_min))",
            _transfer_cases, _lemma3),
    Theorem("calip-eq12", f"{CITE} Eq 12 (Remark 1)", "an eps-LIP(P1) mechanism leaks at most "
            "min[eta + eps, 2 eps, ln((e^eps - 1 + P1_min)/P1_min)] under P2", _transfer_cases, _eq12),
    Theorem("calip-cor6", f"{CITE} Corollary 6", "eta + eps is the smallest term of Eq 12 iff D_TV <= "
            "min(P1_min, P2_min)(e^min(eps, Phi) - 1), Phi = (e^eps - 1 + P1_min)/P1_min - eps", _transfer_cases, _cor6,
            corrected=lambda i: _cor6(i, log_phi=True),
            correction="typo: Phi = ln((e^eps - 1 + P1_min)/P1_min) - eps (the third term of Eq 12 less eps; the log "
                       "was lost)",
            candidates=(("eps <= Phi (the min picks eps)", _eps_below_phi),)),
    Theorem("calip-cor7", f"{CITE} Corollary 7 (Eq 14)", "a mechanism designed on the empirical prior of n samples "
            "leaks within eta = ln(1 + Dbar/(2c)) of its design leakage with probability 1 - beta", _cor7_cases, _cor7),
    Theorem("calip-cor8", f"{CITE} Corollary 8 (Eq 15)", "a mechanism eps-LIP for a family of priors leaks at most "
            "eps + eta under the true prior", _cor8_cases, _cor8),
    Theorem("calip-prop2", f"{CITE} Proposition 2", "the sampling mechanism with lambda = min{delta e^eps, "
            "1 - e^-eps + delta e^-eps} is (eps, delta)-LIP (and lambda is the largest such)", _prop2_cases, _prop2,
            conditions="(eps, delta)-LIP read as Def 5 (Eq 3) or as Cor 9 (Eq 22), which the paper calls equivalent",
            candidates=(("Def 5 (Eq 3)", lambda i: i["definition"] == "def5"), ("delta = 0", lambda i: i["delta"] == 0))),
    Theorem("calip-lemma4", f"{CITE} Lemma 4", "E_gamma of two Gaussians (s1 >= s2) in closed form", _gauss_cases, _lemma4,
            conditions="s1 >= s2", applies=lambda i: i["s1"] >= i["s2"]),
    Theorem("calip-prop3", f"{CITE} Proposition 3", "E_{e^eps}(f||g) = e^eps E_{e^-eps}(g||f) - e^eps + 1",
            _gauss_cases, _prop3),
    Theorem("calip-thm5", f"{CITE} Theorem 5", "the Gaussian mechanism's delta is the sup over x of the two E_gamma "
            "(bounded data range)", _thm5_cases, _thm5),
    Theorem("calip-cor10", f"{CITE} Corollary 10", "the instance-dependent sigma_N(x) is the smallest meeting "
            "(eps, delta)", _cor10_cases, _cor10),
    Theorem("calip-thm6", f"{CITE} Theorem 6 (Eq 25)", "the instance-independent Laplace scale makes the mechanism "
            "eps-LIP", _thm6_cases, _thm6),
    Theorem("calip-ex1", f"{CITE} Example 1", "leakages of the binary symmetric channel: L_LDP, L_LIP, L_MIL, L_MIP "
            "as printed", _ex1_cases, _ex1,
            corrected=lambda i: _ex1(i, _ex1_repaired),
            sample=lambda rng, n: [{"P": float(rng.uniform(0.02, 0.98)), "q": float(rng.uniform(0.005, 0.495)),
                                    "measure": ("ldp", "lip", "mil", "mip")[rng.integers(4)]} for _ in range(n)],
            correction="typo: L_LIP = log max over y, x of max(Pr(y)/Pr(y|x), Pr(y|x)/Pr(y)); the printed L_LIP "
                       "lost the log and the inverse ratios",
            candidates=(("the measure is not LIP (L_LIP is printed without the log and the inverse ratios)",
                         lambda i: i["measure"] != "lip"),)),
]
