"""Privacy notions (SPEC §2): each compiles to constraints on q and audits a given q."""

from __future__ import annotations

from ..errors import ProblemError
from .base import AUDIT_TOL, LinearBlock, Notion, within
from .information import MIL, MIP, mutual_information, parse_information
from .ldp import DI, IDLDP, LDP, parse_ldp_family
from .lip import ALIP, BPLIP, LIP, WCLIP, ApproxLIP, box_vertices, parse_lip_family
from .pufferfish import Pufferfish, parse_pufferfish

NOTIONS = {
    "ldp": (LDP, parse_ldp_family),
    "lip": (LIP, parse_lip_family),
    "bp-lip": (BPLIP, parse_lip_family),
    "wc-lip": (WCLIP, parse_lip_family),
    "alip": (ALIP, parse_lip_family),
    "id-ldp": (IDLDP, parse_ldp_family),
    "pufferfish": (Pufferfish, parse_pufferfish),
    "di": (DI, parse_ldp_family),
    "approx-lip": (ApproxLIP, parse_lip_family),
    "mil": (MIL, parse_information),
    "mip": (MIP, parse_information),
}


def parse_notion(table, key: str) -> Notion:
    """A notion from its problem-file table (`[[privacy]]`); errors name `key`."""
    if not isinstance(table, dict):
        raise ProblemError(f"{key} must be a table, got {table!r}")
    name = table.get("notion")
    if not isinstance(name, str) or name not in NOTIONS:
        raise ProblemError(f"{key}.notion must be one of {', '.join(NOTIONS)}, got {name!r}")
    cls, parse = NOTIONS[name]
    try:
        return parse(cls, table, key)
    except ProblemError as e:
        msg = str(e)
        if msg.startswith(key):
            raise
        first = msg.split(" ", 1)[0].split("[", 1)[0].split(".", 1)[0]
        raise ProblemError(f"{key}.{msg}" if first in cls.keys else f"{key}: {msg}") from None


def leakage_keys(notions) -> list[str]:
    """JSON keys of the `leakage` object: the notion name, with #2, #3 for repeats (CLI.md)."""
    seen: dict[str, int] = {}
    keys = []
    for n in notions:
        seen[n.name] = seen.get(n.name, 0) + 1
        keys.append(n.name if seen[n.name] == 1 else f"{n.name}#{seen[n.name]}")
    return keys


__all__ = ["AUDIT_TOL", "ALIP", "ApproxLIP", "BPLIP", "DI", "IDLDP", "LDP", "LIP", "LinearBlock", "MIL",
           "MIP", "NOTIONS", "Notion", "Pufferfish", "WCLIP", "box_vertices", "leakage_keys",
           "mutual_information", "parse_notion", "within"]
