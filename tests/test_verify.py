"""The verification engine: textbook-true claims hold, deliberately wrong ones are caught, and the
report's counterexamples rebuild into problems that reproduce them. No verdict is copied from a run."""

import json
import math

import numpy as np
import pytest

import channelopt as co
from channelopt.cli import main
from channelopt.estimators import grr
from channelopt.theorems import Theorem, get, registry, verify
from channelopt.theorems.check import channel_claim
from channelopt.theorems.lip_cns import eq21

GRR_CASES = lambda quick: [{"prior": [1 / d] * d, "epsilon": e} for d in (2, 3, 5) for e in (0.3, 1.0, 2.5)]  # noqa: E731


def _hamming_ldp(inputs):
    return co.Problem(prior=inputs["prior"], privacy=[co.LDP(inputs["epsilon"])], utility=co.Distortion("hamming"))


def _run(th):
    """The quick grid only (these claims' closed forms are stated for the grid's uniform priors)."""
    return verify.run([th], quick=True, progress=False, samples=0)[0]


@pytest.mark.parametrize("tid", ["ldp-grr-hamming", "idldp-oue", "cns-prop4"])
def test_textbook_true_claims_verify_as_holding(tid):
    rep = _run(get(tid))
    assert rep.outcomes and not rep.errors
    assert rep.verdict == "holds"


def test_a_wrong_closed_form_that_leaks_is_caught_as_infeasible():
    # GRR built for 2 eps claimed for eps: leaks exactly 2 eps
    wrong = Theorem("test-grr-2eps", "test", "GRR(2 eps) is eps-LDP", GRR_CASES,
                    lambda i: channel_claim(i, _hamming_ldp(i), grr(len(i["prior"]), 2 * i["epsilon"])))
    rep = _run(wrong)
    assert rep.verdict == "infeasible-somewhere"
    assert all(o.kind == "infeasible" for o in rep.outcomes)
    w = rep.worst
    assert w.leakage_of_claim == pytest.approx(2 * w.inputs["epsilon"], rel=1e-9)


def test_a_wrong_closed_form_that_wastes_budget_is_caught_as_suboptimal():
    wrong = Theorem("test-grr-half", "test", "GRR(eps/2) is optimal", GRR_CASES,
                    lambda i: channel_claim(i, _hamming_ldp(i), grr(len(i["prior"]), i["epsilon"] / 2)))
    rep = _run(wrong)
    assert rep.verdict == "suboptimal-somewhere"
    w = rep.worst
    d, e = len(w.inputs["prior"]), w.inputs["epsilon"]
    # Hamming error of GRR(t) with a uniform prior is (d-1)/(e^t + d - 1)
    err = lambda t: (d - 1) / (math.exp(t) + d - 1)   # noqa: E731
    assert w.claimed["objective"] == pytest.approx(err(e / 2), abs=1e-12)
    assert w.optimum["objective"] == pytest.approx(err(e), abs=1e-9)
    assert w.gap == pytest.approx(err(e / 2) - err(e), abs=1e-9)


def test_condition_found_is_a_candidate_that_only_admits_holding_cases():
    def check(i):   # infeasible exactly when eps > 1
        eps = i["epsilon"] if i["epsilon"] <= 1 else 2 * i["epsilon"]
        return channel_claim(i, _hamming_ldp(i), grr(len(i["prior"]), eps))
    th = Theorem("test-cond", "test", "", GRR_CASES, check,
                 candidates=(("always", lambda i: True), ("eps <= 1", lambda i: i["epsilon"] <= 1)))
    rep = _run(th)
    assert rep.verdict == "infeasible-somewhere"
    assert rep.condition_found.startswith("eps <= 1")


def test_rr_lip_verdicts_match_the_feasibility_condition_case_by_case():
    rep = _run(get("tdsc-thm3"))
    for o in rep.outcomes:
        P, e = np.array(o.inputs["prior"]), math.exp(o.inputs["epsilon"])
        # output m's posterior of m is q[m,m] P_m / P_m = 1-(1-P_m)/e^eps when lambda = P (LIP-TDSC Prop 3 proof);
        # the channel is eps-LIP iff every q[m,m] <= e^eps P_m, i.e. e^eps - (1 - P_m) <= P_m e^{2 eps}
        feasible = np.all(1 - (1 - P) / e <= e * P * (1 + 1e-12))
        assert (o.kind != "infeasible") == feasible


def test_worst_counterexample_rebuilds_from_its_inputs():
    rep = _run(get("cns-eq21"))
    w = rep.to_json()["worst"]
    P1, eps = w["inputs"]["prior"][1], w["inputs"]["epsilon"]
    assert w["claimed"]["objective"] == pytest.approx(eq21(P1, eps), rel=1e-12)
    # rebuild with the problem-file keys and solve independently (binary LIP interval formula, docs/spec.md §4)
    e = math.exp(eps)
    lo, hi = max(P1 / e, 1 - e * (1 - P1)), min(e * P1, 1 - (1 - P1) / e)
    assert w["optimum"]["objective"] == pytest.approx(P1 * (1 - P1) - (P1 - lo) * (hi - P1), abs=1e-10)
    assert w["kind"] == "infeasible" and w["claimed"]["objective"] < w["optimum"]["objective"]


def test_every_registered_theorem_is_judged_without_errors():
    reps = verify.run(list(registry().values()), quick=True, progress=False)
    for r in reps:
        assert r.outcomes, r.theorem.id
        assert not r.errors, (r.theorem.id, r.errors[:1])
        assert r.verdict in ("holds", "infeasible-somewhere", "suboptimal-somewhere")


def test_cli_verify_json_and_out(tmp_path, capsys):
    assert main(["verify", "--theorem", "cns-thm2", "--quick", "--json", "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (th,) = doc["theorems"]
    assert set(th) >= {"id", "citation", "cases", "verdict", "worst"}
    assert set(th["worst"]) == {"kind", "inputs", "claimed", "optimum", "leakage_of_claim", "gap"}
    assert (tmp_path / "verify.md").exists() and (tmp_path / "verify.json").exists()
    assert (tmp_path / "cns-thm2.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_theorems_and_unknown_id(capsys):
    assert main(["theorems", "--json"]) == 0
    ids = [t["id"] for t in json.loads(capsys.readouterr().out)["theorems"]]
    assert "tdsc-thm3" in ids and len(ids) == len(set(ids))
    assert main(["verify", "--theorem", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown theorem 'nope'" in err


def test_table_i_baselines_hold_and_idue_total_is_above_the_certified_optimum():
    rep = _run(get("idldp-table1"))
    kinds = {o.inputs["mechanism"]: o for o in rep.outcomes}
    assert kinds["RAPPOR"].kind == "holds" and kinds["OUE"].kind == "holds"
    idue_case = kinds["IDUE"]
    assert idue_case.kind == "suboptimal"
    # the certified opt0 value is a feasible design's Eq 8 objective, recomputed here from its parameters
    from channelopt.encoded import idue
    L = idue.Levels.make(idue_case.inputs["epsilons"], idue_case.inputs["sizes"])
    a, b = np.array(idue_case.optimum["parameters"]["a"]), np.array(idue_case.optimum["parameters"]["b"])
    assert idue.pair_excess(L, a, b) <= 1e-12
    assert idue.worst_case(L, a, b) == pytest.approx(idue_case.optimum["objective"])
    assert idue_case.optimum["objective"] < 8.86 - 0.2


def test_every_citation_names_a_listed_paper_and_the_docs_list_them_all():
    from pathlib import Path

    from channelopt.references import REFERENCES, reference_for

    for th in registry().values():
        assert reference_for(th.citation) is not None, th.citation
    page = (Path(__file__).parent.parent / "docs" / "references.md").read_text()
    for r in REFERENCES.values():
        assert f"| {r.short} |" in page and r.title in page


def test_verify_worst_writes_a_counterexample_that_audit_and_solve_reproduce(tmp_path, capsys):
    assert main(["verify", "--theorem", "tdsc-thm3", "--quick", "--out", str(tmp_path), "--worst", "--json"]) == 0
    worst = json.loads(capsys.readouterr().out)["theorems"][0]["worst"]
    toml, csv = tmp_path / "tdsc-thm3-worst.toml", tmp_path / "tdsc-thm3-claimed.csv"
    assert main(["audit", str(toml), "--channel", str(csv), "--json"]) == 1          # the claimed channel leaks
    audited = json.loads(capsys.readouterr().out)
    assert audited["leakage"]["lip"] == pytest.approx(worst["leakage_of_claim"], rel=1e-12)
    assert main(["solve", str(toml), "--json"]) == 0
    solved = json.loads(capsys.readouterr().out)
    assert solved["objective"] == pytest.approx(worst["optimum"]["objective"], rel=1e-9)
    assert main(["verify", "--theorem", "tdsc-thm3", "--quick", "--worst"]) == 2          # --worst needs --out
    assert "--out" in capsys.readouterr().err


def test_the_errata_command_reproduces_the_cleanest_counterexample(tmp_path, capsys):
    """The errata's command (grid only, as its cleanest case is a grid case) writes that case; the
    audit of the claimed channel shows the leak the report states."""
    assert main(["verify", "--theorem", "tdsc-thm3", "--quick", "--samples", "0", "--worst", "--out", str(tmp_path),
                 "--json"]) == 0
    small = json.loads(capsys.readouterr().out)["theorems"][0]["smallest"]
    assert len(small["inputs"]["prior"]) == 2                    # the fewest symbols the grid has
    toml, csv = tmp_path / "tdsc-thm3-smallest.toml", tmp_path / "tdsc-thm3-smallest-claimed.csv"
    assert main(["audit", str(toml), "--channel", str(csv), "--json"]) == 1
    audited = json.loads(capsys.readouterr().out)
    assert audited["leakage"]["lip"] == pytest.approx(small["leakage_of_claim"], rel=1e-12)
    assert audited["leakage"]["lip"] > small["inputs"]["epsilon"]


def test_problem_files_round_trip_through_the_writer(problems_dir):
    from channelopt.io import parse_toml, problem_from_dict, problem_to_toml

    for path in sorted(problems_dir.glob("*.toml")):
        p = co.load_problem(path)
        text = problem_to_toml(p)
        q = problem_from_dict(parse_toml(text))
        assert problem_to_toml(q) == text, path.name
        assert np.array_equal(p.prior, q.prior) and [n.to_table() for n in p.privacy] == [n.to_table() for n in q.privacy]
    custom = co.Problem(prior=[0.5, 0.5], privacy=[co.IDLDP(epsilons=[1.0, 2.0], combine=lambda a, b: a + b)])
    with pytest.raises(co.ProblemError, match="custom combine"):
        problem_to_toml(custom)


# --- verdict classes, random cases, regions (the classification engine, on claims registered here) ---

from channelopt.closed_forms import rr_lip  # noqa: E402
from channelopt.theorems.check import value_claim  # noqa: E402

PRIOR_EPS = lambda quick: [{"prior": list(P), "epsilon": e}   # noqa: E731
                           for P in ([0.5, 0.5], [0.3, 0.7], [0.1, 0.9], [0.2, 0.3, 0.5], [0.05, 0.15, 0.8])
                           for e in (0.3, 1.0, 2.5)]


def _lip_mse(i):
    return co.Problem(prior=i["prior"], privacy=[co.LIP(i["epsilon"])], utility=co.Bayes("bayes-mse"))


def _rr_lip_is_lip(i):
    """RR-LIP is eps-LIP exactly when P_min >= 1/(e^eps + 1) (its largest lift is 1/P_m - (1/P_m - 1)/e^eps)."""
    return channel_claim(i, _lip_mse(i), rr_lip(i["prior"], i["epsilon"]))


def _judge(th, samples=60):
    return verify.judge(th, quick=True, samples=samples, seed=3)


def test_a_claim_true_exactly_under_a_condition_is_holds_under_condition_with_necessity():
    exact = ("P_min >= 1/(e^eps + 1)", lambda i: min(i["prior"]) >= 1 / (math.exp(i["epsilon"]) + 1) - 1e-12)
    th = Theorem("test-rr", "test", "RR-LIP is optimal", PRIOR_EPS, _rr_lip_is_lip, candidates=(exact,))
    rep = _judge(th)
    assert rep.random and rep.verdict == "infeasible-somewhere"
    assert rep.klass == "holds-under-condition"
    cond = rep.condition()
    assert cond["text"] == exact[0] and cond["sufficient"] and cond["necessary"]
    # necessity checked case by case: every judged case outside the condition fails
    assert all(o.kind != "holds" for o in rep.judged if not exact[1](o.inputs))
    assert "necessary too" in rep.condition_found


def test_a_stricter_condition_than_the_true_one_is_reported_as_sufficient_only():
    strict = ("P_min >= 2/(e^eps + 1)", lambda i: min(i["prior"]) >= 2 / (math.exp(i["epsilon"]) + 1))
    th = Theorem("test-rr-strict", "test", "RR-LIP is optimal", PRIOR_EPS, _rr_lip_is_lip, candidates=(strict,))
    rep = _judge(th)
    cond = rep.condition()
    assert rep.klass == "holds-under-condition" and cond["sufficient"] and not cond["necessary"]
    assert cond["holding_outside"] > 0 and "sufficient only" in rep.condition_found


def _grr_ldp_leakage(i):
    d = len(i["prior"])
    return float(co.audit(_hamming_ldp(i), grr(d, i["epsilon"])).measures["ldp"])


def test_a_lost_logarithm_is_presentation_with_the_repaired_form_holding():
    # printed: "GRR's LDP leakage is e^eps" (the log lost); true: eps
    th = Theorem("test-lost-log", "test", "the LDP leakage of GRR is e^eps", GRR_CASES,
                 lambda i: value_claim(i, math.exp(i["epsilon"]), _grr_ldp_leakage(i)),
                 corrected=lambda i: value_claim(i, i["epsilon"], _grr_ldp_leakage(i)),
                 correction="typo: the leakage is eps (the log was lost)")
    rep = _judge(th, samples=30)
    assert rep.verdict != "holds" and rep.klass == "presentation"
    assert rep.corrected and all(o.kind == "holds" for o in rep.corrected)
    assert rep.to_json()["correction"]["holds"] is True


def test_a_table_of_rounded_optima_is_presentation():
    # a table printing the optimal uniform-prior LDP Hamming error rounded to two decimals
    def true_error(i):
        return co.solve(_hamming_ldp(i), solver="HIGHS").objective

    def printed(i):
        return round(true_error(i), 2)

    def at_printed_precision(i):
        t = true_error(i)
        o = value_claim(i, printed(i), t)
        o.kind = "holds" if abs(printed(i) - t) <= 0.005 + 1e-12 else "infeasible"
        return o

    th = Theorem("test-rounded", "test", "Table: optimal errors", GRR_CASES,
                 lambda i: value_claim(i, printed(i), true_error(i)), corrected=at_printed_precision,
                 correction="rounding: two decimals")
    rep = _judge(th, samples=20)
    assert any(o.kind != "holds" for o in rep.outcomes)   # at 1e-6 the rounded values fail
    assert all(o.gap <= 0.005 + 1e-12 for o in rep.judged)
    assert rep.klass == "presentation"


def test_a_wrong_claim_without_repair_or_condition_keeps_its_failure_class_and_rate():
    wrong = Theorem("test-grr-2eps", "test", "GRR(2 eps) is eps-LDP", GRR_CASES,
                    lambda i: channel_claim(i, _hamming_ldp(i), grr(len(i["prior"]), 2 * i["epsilon"])))
    rep = _judge(wrong, samples=50)
    assert rep.klass == "infeasible-somewhere"
    rate = rep.failure_rate()
    # GRR(2 eps) leaks 2 eps > eps at every prior: every random case fails
    assert rate["cases"] == 50 and rate["failures"] == 50
    assert rate["ci95"][0] > 0.92 and rate["ci95"][1] == 1.0
    assert rep.region().startswith("fails on every one")


def test_region_finds_the_budget_threshold_of_a_claim_that_fails_above_it():
    from channelopt.theorems.check import bound_claim

    def check(i):   # "GRR built for min(eps, 2 eps - 1) ... leaks at most eps": false exactly when eps > 1
        built = i["epsilon"] if i["epsilon"] <= 1 else 2 * i["epsilon"]
        leak = float(co.audit(_hamming_ldp(i), grr(len(i["prior"]), built)).measures["ldp"])
        return bound_claim(i, leak, i["epsilon"])
    th = Theorem("test-region", "test", "", GRR_CASES, check)
    rep = _judge(th, samples=80)
    region = rep.region()
    assert region.startswith("epsilon > ") and "100% of the" in region and ", 0% of the" in region
    threshold = float(region.split()[2].rstrip(":"))
    assert 0.3 <= threshold <= 1.0 + 1e-9
    # random cases redraw the prior and the budget over the grid's range
    eps = [o.inputs["epsilon"] for o in rep.random]
    assert min(eps) >= 0.3 - 1e-12 and max(eps) <= 2.5 + 1e-12 and len(set(eps)) == len(eps)
    assert any(len(set(o.inputs["prior"])) > 1 for o in rep.random)


def test_random_cases_are_seeded_and_respect_the_stated_conditions():
    th = get("ldp-grr-hamming")
    a, b = verify.judge(th, quick=True, samples=10, seed=1), verify.judge(th, quick=True, samples=10, seed=1)
    assert [o.inputs for o in a.random] == [o.inputs for o in b.random]
    assert all(np.ptp(o.inputs["prior"]) == 0 for o in a.random)     # uniform, as the claim states
    c = verify.judge(th, quick=True, samples=10, seed=2)
    assert [o.inputs for o in a.random] != [o.inputs for o in c.random]


def test_cli_errata_and_bad_verify_arguments(tmp_path, capsys):
    out = tmp_path / "ERRATA.md"
    assert main(["verify", "--quick", "--samples", "5", "--theorem", "tdsc-thm3", "--theorem", "calip-ex1",
                 "--theorem", "cns-prop4", "--errata", str(out)]) == 0
    text = out.read_text()
    assert "## LIP-TDSC" in text and "## CA-LIP" in text and "## LIP-CNS" in text
    assert "holds-under-condition" in text and "presentation" in text
    assert "channelopt verify --theorem tdsc-thm3 --samples 0 --worst --out tdsc-thm3/" in text
    assert "channelopt audit tdsc-thm3/tdsc-thm3-smallest.toml --channel tdsc-thm3/tdsc-thm3-smallest-claimed.csv" in text
    assert "LIP-CNS Proposition 4 (cns-prop4)" in text          # claims that hold are listed with their cases
    capsys.readouterr()
    for args, needle in ((["--samples", "-1"], "--samples"), (["--jobs", "0"], "--jobs")):
        with pytest.raises(SystemExit) as e:
            raise SystemExit(main(["verify", "--quick", *args]))
        assert e.value.code == 2
        assert needle in capsys.readouterr().err
