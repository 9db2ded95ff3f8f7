"""The exception tree: every failure the toolkit reports on purpose derives from ChannelOptError."""


class ChannelOptError(Exception):
    """Base class of the toolkit's own errors."""


class ProblemError(ChannelOptError, ValueError):
    """Invalid input: the message names the offending key, its value and the rule it breaks."""


class SolverError(ChannelOptError, RuntimeError):
    """A numerical solver could not be run at all (not installed, crashed); says what to try."""
