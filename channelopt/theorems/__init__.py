"""Registry of the papers' closed forms, relations and bounds (docs/spec.md §6), one module per paper.

Each `Theorem` carries the claim as a function of its inputs, the conditions the paper states
(`applies`), its citation, a grid of cases, and a `check` that returns an `Outcome` computed
from the exact audit and a certified optimum (verify.py). Verdicts are never stored: they are
computed by `channelopt verify` each time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ..errors import ProblemError
from ..references import reference_for


@dataclass
class Outcome:
    """One case. kind: "holds" | "infeasible" | "suboptimal".

    gap: for "infeasible", leakage minus budget (or a violated bound's excess); for
    "suboptimal", how much worse the claim is than the certified optimum (utility units).
    """

    kind: str
    inputs: dict
    claimed: dict
    optimum: dict | None = None
    leakage_of_claim: Any = None
    gap: float = 0.0
    note: str = ""
    problem: Any = field(default=None, repr=False, compare=False)
    """For a channel claim: the Problem it was judged on (`verify --worst` writes it out)."""


def _always(inputs: dict) -> bool:
    return True


@dataclass(frozen=True)
class Theorem:
    """One registered claim of a paper, judged by `channelopt verify`.

    Attributes
    ----------
    id : str
        The registry key (`tdsc-thm3`).
    citation : str
        Short name and result (`LIP-TDSC Theorem 3`; docs/references.md).
    claim : str
        The statement as printed, in words.
    cases : callable
        cases(quick) -> list of input dicts (problem-file keys).
    check : callable
        check(inputs) -> Outcome, from the exact audit and a certified optimum.
    conditions : str
        The conditions the paper states.
    applies : callable
        applies(inputs) -> bool: whether the stated conditions hold.
    axes, coords :
        Two numeric input names and how to compute them, for the holds/fails map.
    candidates : tuple of (str, callable)
        Conditions tried as `condition_found` where the claim fails.
    corrected : callable, optional
        corrected(inputs) -> Outcome: the check of the statement with a presentation error
        repaired (a typo-level slip: a lost logarithm, a swapped sign; or a rounding), so that
        `verify` can class the claim `presentation` when the repaired statement holds.
    correction : str
        The repaired statement and what kind of slip it repairs ("typo: ...", "rounding: ...").
    sample : callable, optional
        sample(rng, n) -> list of input dicts drawn at random; default `verify.random_cases`,
        which redraws the prior (Dirichlet, several concentrations) and the budget (log-uniform
        over the grid's range) of random grid cases.
    """

    id: str
    citation: str
    claim: str
    cases: Callable[[bool], list]
    check: Callable[[dict], Outcome]
    conditions: str = ""
    applies: Callable[[dict], bool] = _always
    axes: tuple = ()
    """Two numeric input names (computed from a case by `coords`) for the holds/fails map."""
    coords: Callable[[dict], tuple] | None = None
    candidates: tuple = field(default=())
    """(text, predicate) conditions tried as `condition_found` when the theorem fails."""
    corrected: Callable[[dict], Outcome] | None = None
    correction: str = ""
    sample: Callable[[Any, int], list] | None = None

    def describe(self) -> dict:
        ref = reference_for(self.citation)
        return {"id": self.id, "citation": self.citation, "reference": str(ref) if ref else "",
                "claim": self.claim, "conditions": self.conditions or "none stated"}


def registry() -> dict[str, Theorem]:
    from . import alip, calip, idldp, ksr, lip_cns, lip_tdsc
    out: dict[str, Theorem] = {}
    for module in (lip_tdsc, lip_cns, idldp, calip, alip, ksr):
        for th in module.THEOREMS:
            out[th.id] = th
    return out


def get(theorem_id: str) -> Theorem:
    reg = registry()
    if theorem_id not in reg:
        raise ProblemError(f"unknown theorem {theorem_id!r}; known: {', '.join(reg)}")
    return reg[theorem_id]
