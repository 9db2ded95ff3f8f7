import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = sorted((ROOT / "problems").glob("*.toml"))
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def problems_dir():
    return ROOT / "problems"


class JumpingClock:
    """A stand-in for a module's `time` that reads 0 at the start, 1 during the first round and
    100 from the second on: with a time limit of 10 s, a loop runs out of time after its first
    round (monkeypatch it over the module's `time`)."""

    def __init__(self):
        self.ticks = iter([0.0, 1.0] + [100.0] * 1000)

    def perf_counter(self):
        return next(self.ticks)


def replace_backends(monkeypatch, fake):
    """Route every registered solver through fake(program, problem, name) for one test (the
    registry's entries are replaced in place; take `dict(BACKENDS)` first to call the real ones)."""
    import dataclasses

    from channelopt.solvers import BACKENDS

    for name, b in list(BACKENDS.items()):
        monkeypatch.setitem(BACKENDS, name, dataclasses.replace(
            b, run=lambda prog, prob, opts, name=name: fake(prog, prob, name)))
