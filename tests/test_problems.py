"""Every problems/*.toml solves to the result it states in its [expected] table."""

import tomllib

import pytest

import channelopt as co
from conftest import PROBLEMS

DEFAULT_TOL = 1e-7


@pytest.mark.parametrize("path", PROBLEMS, ids=lambda p: p.stem)
def test_problem_file_meets_its_expected_result(path):
    doc = tomllib.loads(path.read_text())
    expected = doc["expected"]
    result = co.solve(co.load_problem(path))
    assert result.status == expected["status"], result.message
    assert all(result.satisfied.values())
    tol = expected.get("tolerance", DEFAULT_TOL)
    if "objective" in expected:
        assert result.objective == pytest.approx(expected["objective"], abs=tol)
    if "objective_min" in expected:
        assert result.objective >= expected["objective_min"] - tol
    if "objective_max" in expected:
        assert result.objective <= expected["objective_max"] + tol
    if "equals_problem" in expected:
        other = co.solve(co.load_problem(path.with_name(expected["equals_problem"])))
        assert result.objective == pytest.approx(other.objective, abs=tol)


def test_there_are_at_least_ten_reference_problems():
    assert len(PROBLEMS) >= 10


def test_every_expected_value_comes_with_its_source():
    for path in PROBLEMS:
        expected = tomllib.loads(path.read_text())["expected"]
        assert expected.get("source"), path.name
