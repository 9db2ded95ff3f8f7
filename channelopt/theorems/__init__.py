"""Closed forms of the papers (SPEC §6)."""
