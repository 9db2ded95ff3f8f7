"""Audit real LDP implementations: exact (white-box) and statistical (black-box) leakage of any randomizer.

`audit_mechanism` is the entry point; `adapters.ADAPTERS` lists the frequency oracles of pure-ldp
and multi-freq-ldpy; `recording` enumerates a randomizer's internal randomness; `blackbox` bounds
the leakage of one that can only be called.
"""

from .adapters import ADAPTERS, Randomizer, build
from .audit import MechanismAudit, audit_mechanism
from .recording import NotEnumerable

__all__ = ["ADAPTERS", "MechanismAudit", "NotEnumerable", "Randomizer", "audit_mechanism", "build"]
