"""The exception tree: every failure the toolkit reports on purpose derives from ChannelOptError."""


class ChannelOptError(Exception):
    """Base class of the toolkit's own errors."""


class ProblemError(ChannelOptError, ValueError):
    """Invalid input: the message names the offending key, its value and the rule it breaks."""


class SolverError(ChannelOptError, RuntimeError):
    """A numerical solver could not be run at all (not installed, crashed); says what to try."""


def did_you_mean(word, options) -> str:
    """" (did you mean 'x'?)" for the closest of `options` to a mistyped `word`, or ""."""
    import difflib

    if not isinstance(word, str):
        return ""
    options = [str(o) for o in options]
    lower = {o.lower(): o for o in options}
    close = difflib.get_close_matches(word.lower(), list(lower), n=1, cutoff=0.6)
    return f" (did you mean {lower[close[0]]!r}?)" if close else ""
