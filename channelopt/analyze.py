"""`channelopt analyze`: exact relations between notions for one prior (CA-LIP §II-III) and the
watchdog for one joint (ALIP). Each analysis returns a JSON-ready dict; the CLI prints it.

    relations    eps~(P) of CA-LIP Eq 9 (exact LP) vs Prop 1; DI of eps-LIP vs Thm 3; LIP of eps-LDP vs Thm 1
    composition  exact LIP leakage of n independent releases vs Thm 4
    transfer     leakage under P2 of mechanisms eps-LIP under P1 (exact) vs Lemma 3 / Eq 12
    watchdog     low/high-risk split, merged lifts (ALIP Prop 2), NMI, and the certified ALIP optimum
"""

from __future__ import annotations

import numpy as np

from . import relations as R
from .errors import ProblemError
from .problem import SUM_TOL, as_vector


def _eps(name: str, v) -> float:
    if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
        raise ProblemError(f"{name} must be a finite number > 0, got {v!r}")
    return float(v)


def _prior(name: str, P) -> np.ndarray:
    P = as_vector(name, P)
    if np.any(P < 0):
        raise ProblemError(f"{name}[{int(np.argmin(P))}] must be >= 0, got {float(P.min())!r}")
    if abs(P.sum() - 1.0) > SUM_TOL:
        raise ProblemError(f"{name} must sum to 1 (tolerance {SUM_TOL:g}), got {float(P.sum())!r}")
    if P.size < 2:
        raise ProblemError(f"{name} needs at least 2 symbols")
    if np.any(P <= 0):
        raise ProblemError(f"{name}[{int(np.argmin(P))}] = 0: LIP needs every symbol to have positive probability")
    return P


def relations(prior, epsilon: float) -> dict:
    from .closed_forms import ldp_to_lip, prop1_bound
    P, eps = _prior("prior", prior), _eps("epsilon", epsilon)
    dinf = float(np.log(P.max() / P.min()))
    A = R.lip_cone(P, eps)
    return {
        "prior": P.tolist(), "epsilon": eps,
        "lip_to_ldp": {"exact": R.ldp_leakage_of(A, P.size), "prop1_bound": prop1_bound(P, eps)},
        "lip_to_di": {"exact": R.ldp_leakage_of(A, P.size, weights=P), "thm3_bound": 2 * eps + dinf},
        "ldp_to_lip": {"exact": R.lip_leakage_of(R.ldp_cone(P.size, eps), P), "thm1_bound": ldp_to_lip(P.min(), eps)},
    }


def composition(prior, epsilons) -> dict:
    from .closed_forms import thm4_bound
    P = _prior("prior", prior)
    eps = [_eps(f"epsilons[{k}]", e) for k, e in enumerate(epsilons)]
    if len(eps) < 1:
        raise ProblemError("epsilons: need n >= 1 releases")
    exact = R.repeated_leakage([R.rays(R.lip_cone(P, e), P) for e in eps], P)
    return {"prior": P.tolist(), "epsilons": eps, "exact": exact, "thm4_bound": thm4_bound(P.min(), eps)}


def transfer(prior, other, epsilon: float) -> dict:
    from .closed_forms import prop1_bound
    P1, P2, eps = _prior("prior", prior), _prior("other", other), _eps("epsilon", epsilon)
    if P1.size != P2.size:
        raise ProblemError(f"prior and other must have the same length, got {P1.size} and {P2.size}")
    e = R.eta(P1, P2)
    return {"prior": P1.tolist(), "other": P2.tolist(), "epsilon": eps, "tv": R.tv(P1, P2), "eta": e,
            "exact_under_other": R.lip_leakage_of(R.lip_cone(P1, eps), P2),
            "exact_reverse": R.lip_leakage_of(R.lip_cone(P2, eps), P1),
            "lemma3_bound": eps + e, "eq12_bound": min(eps + e, prop1_bound(P1, eps))}


def watchdog_report(joint, eps_l: float, eps_u: float, optimum: bool = True) -> dict:
    from .watchdog import check_joint, optimum_nmi, watchdog
    J = check_joint(joint)
    w = watchdog(J, eps_l, eps_u)
    out = {"eps_lower": eps_l, "eps_upper": eps_u, "low_risk": w.low, "high_risk": w.high,
           "moved_by_repair": w.moved, "met_budget_before_repair": w.attained_before_repair,
           "merged_log_lifts": None if w.merged_lifts is None else {"max": w.merged_lifts[0], "min": w.merged_lifts[1]},
           "leakage": dict(zip(("upper", "lower"), w.leakage(J))), "nmi": w.nmi}
    if optimum:
        out["certified_optimum_nmi"] = optimum_nmi(J, eps_l, eps_u)
    return out


def parse_list(name: str, text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ProblemError(f"{name} must be comma-separated numbers, got {text!r}") from None


EXPLAIN = {
    "prior": ("prior P", ""),
    "other": ("other prior P2", ""),
    "epsilon": ("budget eps", "nats"),
    "epsilons": ("budgets of the releases", "nats"),
    "lip_to_ldp": ("LDP leakage of any eps-LIP channel under P (CA-LIP Prop 1)", "nats"),
    "lip_to_di": ("DI leakage of any eps-LIP channel under P (CA-LIP Thm 3)", "nats"),
    "ldp_to_lip": ("LIP leakage under P of any eps-LDP channel (CA-LIP Thm 1)", "nats"),
    "exact": ("exact LIP leakage of the independent releases (CA-LIP Thm 4)", "nats"),
    "thm4_bound": ("CA-LIP Thm 4 bound", "nats"),
    "tv": ("total variation distance D_TV(P, P2)", ""),
    "eta": ("eta = ln(1 + D_TV / min P) (CA-LIP Lemma 3)", "nats"),
    "exact_under_other": ("exact LIP leakage under P2 of eps-LIP(P) channels", "nats"),
    "exact_reverse": ("exact LIP leakage under P of eps-LIP(P2) channels", "nats"),
    "lemma3_bound": ("CA-LIP Lemma 3 bound eps + eta", "nats"),
    "eq12_bound": ("CA-LIP Eq 12 bound", "nats"),
    "eps_lower": ("ALIP lower budget", "nats"),
    "eps_upper": ("ALIP upper budget", "nats"),
    "low_risk": ("low-risk symbols (ALIP Prop 2)", ""),
    "high_risk": ("high-risk symbols", ""),
    "moved_by_repair": ("symbols moved by the repair", ""),
    "met_budget_before_repair": ("budgets met before the repair", ""),
    "merged_log_lifts": ("log-lifts of the merged high-risk output", "nats"),
    "leakage": ("ALIP leakage of the watchdog", "nats"),
    "nmi": ("normalized mutual information I(S;Y)/H(S) of the watchdog", ""),
    "certified_optimum_nmi": ("NMI of the certified ALIP optimum", ""),
}


def render(doc: dict) -> str:
    """An analysis as labelled lines: what each quantity is, its value and unit; the exact value
    beside each paper bound."""
    def value(v, unit):
        if isinstance(v, float):
            return f"{v:.6g}" + (f" {unit}" if unit else "")
        if isinstance(v, list):
            return "[" + ", ".join(f"{x:.6g}" if isinstance(x, float) else str(x) for x in v) + "]"
        return "-" if v is None else str(v)

    lines = []
    for key, v in doc.items():
        what, unit = EXPLAIN.get(key, (key, ""))
        if isinstance(v, dict):
            parts = ", ".join(f"{k.replace('_', ' ')} {value(x, unit)}" for k, x in v.items())
            lines.append(f"{what}: {parts}")
        else:
            lines.append(f"{what}: {value(v, unit)}")
    return "\n".join(lines)
