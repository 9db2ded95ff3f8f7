"""Privacy notions (docs/spec.md §2): each compiles to constraints on q and audits a given q."""

from __future__ import annotations

from ..errors import ProblemError, did_you_mean
from .base import AUDIT_TOL, LinearBlock, NotHomogeneous, Notion, within
from .information import MIL, MIP, mutual_information
from .ldp import DI, IDLDP, LDP
from .lip import ALIP, BPLIP, LIP, WCLIP, ApproxLIP, box_vertices
from .metric import MetricLDP
from .pufferfish import Pufferfish

NOTIONS: dict[str, type[Notion]] = {cls.name: cls for cls in (
    LDP, LIP, BPLIP, WCLIP, ALIP, IDLDP, Pufferfish, DI, ApproxLIP, MIL, MIP, MetricLDP)}
"""The registry: problem-file name -> notion class. A new notion is one module and one entry."""


def parse_notion(table, key: str) -> Notion:
    """A notion from its problem-file table (`[[privacy]]`); errors name `key`."""
    if not isinstance(table, dict):
        raise ProblemError(f"{key} must be a table, got {table!r}")
    name = table.get("notion")
    if not isinstance(name, str) or name not in NOTIONS:
        raise ProblemError(f"{key}.notion must be one of {', '.join(NOTIONS)}, got {name!r}{did_you_mean(name, NOTIONS)}")
    cls = NOTIONS[name]
    try:
        return cls.parse(table, key)
    except ProblemError as e:
        msg = str(e)
        if msg.startswith(key):
            raise
        first = msg.split(" ", 1)[0].split("[", 1)[0].split(".", 1)[0]
        raise ProblemError(f"{key}.{msg}" if first in cls.keys else f"{key}: {msg}") from None


def leakage_keys(notions) -> list[str]:
    """JSON keys of the `leakage` object: the notion name, with #2, #3 for repeats (docs/cli.md)."""
    seen: dict[str, int] = {}
    keys = []
    for n in notions:
        seen[n.name] = seen.get(n.name, 0) + 1
        keys.append(n.name if seen[n.name] == 1 else f"{n.name}#{seen[n.name]}")
    return keys


__all__ = ["AUDIT_TOL", "ALIP", "ApproxLIP", "BPLIP", "DI", "IDLDP", "LDP", "LIP", "LinearBlock", "MIL",
           "MIP", "MetricLDP", "NOTIONS", "NotHomogeneous", "Notion", "Pufferfish", "WCLIP", "box_vertices", "leakage_keys",
           "mutual_information", "parse_notion", "within"]
