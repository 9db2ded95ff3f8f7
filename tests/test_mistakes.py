"""Help on mistakes: suggestions for mistyped names, any-case solver names, plain numbers in
messages, and the Python API's accepted forms (issue: working with results, part 6)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import channelopt as co
from channelopt.cli import main


def doc(**over):
    d = {"input": {"prior": [0.5, 0.5]}, "privacy": [{"notion": "lip", "epsilon": 1.0}],
         "utility": {"kind": "hamming"}}
    d.update(over)
    return d


@pytest.mark.parametrize("document,suggestion", [
    (doc(privacy=[{"notion": "lipp", "epsilon": 1.0}]), "did you mean 'lip'?"),
    (doc(privacy=[{"notion": "lip", "epsilom": 1.0}]), "did you mean 'epsilon'?"),
    (doc(utility={"kind": "bayes_mse"}), "did you mean 'bayes-mse'?"),
    (doc(utility={"kind": "hamming", "matrx": [[0, 1], [1, 0]]}), "did you mean 'matrix'?"),
    ({**doc(), "utilty": {"kind": "hamming"}}, "did you mean 'utility'?"),
    (doc(input={"prior": [0.5, 0.5], "valeus": [0, 1]}), "did you mean 'values'?"),
    (doc(solver={"name": "clarabell"}), "did you mean 'CLARABEL'?"),
])
def test_mistyped_names_get_a_suggestion(document, suggestion):
    with pytest.raises(co.ProblemError) as e:
        co.problem_from_dict(document)
    assert suggestion in str(e.value)


def test_no_suggestion_for_a_word_unlike_any_option():
    with pytest.raises(co.ProblemError) as e:
        co.problem_from_dict(doc(privacy=[{"notion": "zzzzzz", "epsilon": 1.0}]))
    assert "did you mean" not in str(e.value)


def test_solver_names_in_any_case(problems_dir, capsys):
    p = co.Problem(prior=[0.3, 0.7], privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"), solver="highs")
    assert p.solver == "HIGHS"
    assert co.solve(p, solver="clarabel").solver == "CLARABEL"
    assert main(["solve", str(problems_dir / "ldp_uniform_grr.toml"), "--solver", "Ecos"]) == 0
    assert "ECOS" in capsys.readouterr().out


def test_messages_show_plain_numbers():
    from channelopt.methods.result import clean

    _, why = clean(np.array([[0.5, 0.6], [0.5, 0.5]]))
    assert "np.float64" not in why and "1.1" in why


def test_the_api_accepts_names_and_tables_and_says_what_it_accepts():
    a = co.Problem(prior=[0.3, 0.7], privacy=[("lip", {"epsilon": 1.0}), {"notion": "ldp", "epsilon": 2.0}],
                   utility="hamming")
    b = co.Problem(prior=[0.3, 0.7], privacy=[co.LIP(1.0), co.LDP(2.0)], utility=co.Distortion("hamming"))
    assert a.privacy == b.privacy and a.utility == b.utility
    assert co.solve(a).objective == pytest.approx(co.solve(b).objective, abs=1e-12)
    assert co.Problem(prior=[0.3, 0.7], privacy=[co.LIP(1.0)], utility={"kind": "bayes-mse"}).utility == co.Bayes("bayes-mse")
    with pytest.raises(TypeError, match=r"privacy\[0\] must be a notion"):
        co.Problem(prior=[0.3, 0.7], privacy=["lip"])
    with pytest.raises(TypeError, match="utility must be"):
        co.Problem(prior=[0.3, 0.7], privacy=[co.LIP(1.0)], utility=3)
    with pytest.raises(co.ProblemError, match="did you mean 'hamming'"):
        co.Problem(prior=[0.3, 0.7], privacy=[co.LIP(1.0)], utility="haming")


def test_a_problem_without_privacy_warns():
    p = co.Problem(prior=[0.3, 0.7], utility=co.Distortion("hamming"))
    with pytest.warns(UserWarning, match="no privacy notion"):
        r = co.solve(p)
    assert r.status == "optimal" and r.objective == pytest.approx(0.0, abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        co.solve(co.Problem(prior=[0.3, 0.7], privacy=[co.LIP(1.0)], utility=co.Distortion("hamming")))


def test_api_messages_name_arguments_and_file_messages_name_keys():
    with pytest.raises(co.ProblemError) as api:
        co.Problem(prior=[0.5, 0.6])
    assert str(api.value).startswith("prior must sum to 1") and "normalize=True" in str(api.value)
    with pytest.raises(co.ProblemError) as api:
        co.Problem(prior=[0.5, 0.5], output_size=0)
    assert str(api.value).startswith("output_size must be")
    with pytest.raises(co.ProblemError) as f:
        co.problem_from_dict(doc(input={"prior": [0.5, 0.6]}))
    assert str(f.value).startswith("input.prior must sum to 1") and "normalize = true" in str(f.value)
    with pytest.raises(co.ProblemError, match=r"Problem\(utility=...\)"):
        co.solve(co.Problem(prior=[0.5, 0.5], privacy=[co.LDP(1.0)]))
