"""Auditing LDP implementations: recording random source, exact extraction, black-box bounds.

Truths used: channels written down from each mechanism's definition; a brute-force leakage on the
extracted matrix; the known exact eps of randomizers built here; libqif-free, peer libraries only
where installed (extra `peers`)."""

import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import channelopt as co
from channelopt.errors import ProblemError
from channelopt.implementations import audit_mechanism, build
from channelopt.implementations.blackbox import count_events, ldp_bound, lip_bound, plan_samples
from channelopt.implementations.extract import bitwise_channel, enumerate_channel, from_bits
from channelopt.implementations.recording import NotEnumerable, enumerate_outputs

HERE = __name__
PKG = (__name__.split(".")[0],)


def grr(eps, d):
    p = math.exp(eps) / (math.exp(eps) + d - 1)
    return np.where(np.eye(d, dtype=bool), p, (1 - p) / (d - 1))


# --- randomizers written here, against Python's random and NumPy's global generator ----------------

def grr_python(x, d=5, eps=1.0):
    """GRR drawn as 'keep with p, else uniform among the others' (random.random + randint)."""
    p = math.exp(eps) / (math.exp(eps) + d - 1)
    if random.random() < p:
        return x
    y = random.randint(0, d - 2)
    return y + (y >= x)


def grr_numpy(x, d=5, eps=1.0):
    """The same GRR drawn as one categorical draw (np.random.choice with p)."""
    probs = grr(eps, d)[x]
    return int(np.random.choice(d, p=probs))


def grr_leaky(x, d=5, eps=1.0):
    """A GRR whose budget is 5% above what it claims (claimed eps, uses 1.05 eps)."""
    return grr_python(x, d, eps * 1.05)


def never_zero_but(x, d=4):
    """Output 0 is impossible from input 0 and possible from the others: eps = infinity."""
    if x == 0:
        return 1 + random.randint(0, d - 2)
    return random.randint(0, d - 1)


def laplace_report(x):
    return x + np.random.laplace(scale=1.0)


def raises_on_two(x):
    if x == 2:
        raise RuntimeError("boom")
    return random.randint(0, 1)


def not_seeded(x, _rng=np.random.default_rng()):
    """Draws from a private generator the recorder does not replace (2^32 values: two runs agree
    with probability 2^-32)."""
    return int(_rng.integers(0, 2**32))


def uniform_arith(x):
    return int(random.random() * 4)


def test_enumeration_equals_the_definition_for_two_ways_of_drawing_grr():
    for run in (grr_python, grr_numpy):
        ext = enumerate_channel(run, 5, PKG)
        assert ext.outputs == list(range(5))
        np.testing.assert_allclose(ext.channel, grr(1.0, 5), atol=1e-15)
        eps, _ = ext.ldp()
        assert eps == pytest.approx(1.0, abs=1e-12)


def test_symbolic_uniform_splits_nested_thresholds_exactly():
    def three_way():
        u = random.random()
        if u < 0.5:
            return "a" if u < 0.2 else "b"
        return "c" if u > 0.9 else "d"
    e = enumerate_outputs(three_way, PKG)
    assert e.dist == pytest.approx({"a": 0.2, "b": 0.3, "c": 0.1, "d": 0.4}, abs=1e-15)


def test_lip_and_ldp_of_an_extraction_match_the_core_audit():
    ext = enumerate_channel(lambda x: grr_python(x, 4, 0.7), 4, PKG)
    prior = np.array([0.1, 0.2, 0.3, 0.4])
    problem = co.Problem(prior=prior, privacy=[co.LDP(1.0), co.LIP(1.0)])
    a = co.audit(problem, ext.channel)
    assert ext.ldp()[0] == pytest.approx(a.leakage["ldp"], abs=1e-12)
    assert ext.lip(prior) == pytest.approx(a.leakage["lip"], abs=1e-12)


def test_bitwise_extraction_agrees_with_full_enumeration_and_with_declared_bits():
    def ue(k, a=0.7, b=0.2):
        def run(x):
            out = np.zeros(k, dtype=int)
            for i in range(k):
                out[i] = int(np.random.random() < (a if i == x else b))
            return out
        return run
    full = enumerate_channel(ue(5), 5, PKG)
    bits = bitwise_channel(ue, 5, PKG)
    declared = from_bits(5, 0.7, 0.2, "test")
    eps = math.log(0.7 / 0.2) + math.log(0.8 / 0.3)                     # ID-LDP Eq 5
    assert full.ldp()[0] == pytest.approx(eps, abs=1e-12)
    assert bits.ldp()[0] == pytest.approx(eps, abs=1e-12)
    assert declared.ldp()[0] == pytest.approx(eps, abs=1e-12)
    prior = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    assert bits.lip(prior) == pytest.approx(full.lip(prior), abs=1e-12)


def test_bitwise_refuses_a_report_that_is_not_a_product():
    def correlated(k):
        def run(x):
            b = int(np.random.random() < 0.5)
            return np.full(k, b) if x else np.zeros(k, dtype=int) + int(np.random.random() < 0.3)
        return run
    with pytest.raises(NotEnumerable):
        bitwise_channel(correlated, 6, PKG)


def test_continuous_draws_and_arithmetic_on_uniforms_are_not_enumerable():
    with pytest.raises(NotEnumerable, match="continuous"):
        enumerate_outputs(lambda: laplace_report(0), PKG)
    with pytest.raises(NotEnumerable, match="arithmetic"):
        enumerate_outputs(lambda: uniform_arith(0), PKG)


def test_white_box_flags_the_deliberately_broken_randomizers():
    a = audit_mechanism(never_zero_but, 4, 1.0)
    assert a.verdict == "violates claim" and a.leakage["ldp"] == math.inf
    assert a.witness["report"] == 0 and a.witness["x_prime"] == 0
    b = audit_mechanism(grr_leaky, 5, 1.0)
    assert b.verdict == "violates claim"
    assert b.leakage["ldp"] == pytest.approx(1.05, abs=1e-12)
    ok = audit_mechanism(grr_python, 5, 1.0)
    assert ok.verdict == "within claim" and ok.method.startswith("white-box")


def test_black_box_flags_an_impossible_output():
    a = audit_mechanism(never_zero_but, 4, 1.0, method="black-box", samples=4000)
    assert a.verdict == "violates claim"
    assert a.witness["report"] == 0 and a.witness["x_prime"] == 0


def test_black_box_catches_a_planned_violation_margin():
    # GRR d = 3 run at eps + 0.5 while claiming eps = 1: plan N for margin 0.5 on the witnessing event
    d, eps, margin = 3, 1.0, 0.5
    b = 1 / (math.exp(eps + margin) + d - 1)
    n = plan_samples(eps, margin, b, intervals=d * d)
    caught = 0
    for seed in range(5):
        a = audit_mechanism(lambda x: grr_python(x, d, eps + margin), d, eps, method="black-box", samples=n, seed=seed)
        caught += a.verdict == "violates claim"
    assert caught >= 3


def test_black_box_bound_covers_the_exact_eps_in_repeated_runs():
    d, eps = 4, 1.0
    below = 0
    for seed in range(40):
        c = count_events(lambda x: grr_numpy(x, d, eps), d, 3000, seed=seed, packages=PKG)
        b = ldp_bound(c, 0.95)
        below += b.lower <= eps
        assert lip_bound(c, np.full(d, 1 / d)).lower <= math.log(math.exp(eps) * d / (math.exp(eps) + d - 1)) + 1e-12
    assert below >= 38                                              # >= 95% of 40


def test_black_box_is_seeded():
    c1 = count_events(lambda x: grr_python(x), 5, 500, seed=3, packages=PKG)
    c2 = count_events(lambda x: grr_python(x), 5, 500, seed=3, packages=PKG)
    assert np.array_equal(c1.counts, c2.counts) and c1.events == c2.events


def gauss_report(x):
    return x + np.random.normal(scale=1.0)


def test_continuous_randomizer_falls_back_to_black_box_with_events():
    # Gaussian noise has no finite eps; sampling bounds it from below on the event y > 1/2
    a = audit_mechanism(gauss_report, 2, 1.0, samples=3000, events=lambda y: [int(y > 0.5)])
    assert a.method.startswith("black-box") and "continuous" in " ".join(a.notes)
    assert a.leakage["ldp"]["lower"] > 0
    # Laplace noise added to the input is read exactly: eps = |1 - 0| / scale
    exact = audit_mechanism(laplace_report, 2, 1.0)
    assert "additive Laplace" in exact.method and exact.leakage["ldp"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("target, rule", [
    (raises_on_two, "raised RuntimeError on input x = 2"),
    (not_seeded, "not deterministic under a fixed seed"),
])
def test_bad_randomizers_get_a_clear_error(target, rule):
    with pytest.raises(ProblemError, match=rule):
        audit_mechanism(target, 4, 1.0, method="black-box", samples=50)


def test_outputs_outside_the_declared_space_are_an_error():
    with pytest.raises(ProblemError, match="outside the declared outputs"):
        audit_mechanism(grr_python, 5, 1.0, method="black-box", samples=20, outputs=[0, 1, 2])


def test_unknown_adapter_and_bad_parameters():
    with pytest.raises(ProblemError, match="did you mean 'pure-ldp:OUE'"):
        build("pure-ldp:OUF", 4, 1.0)
    with pytest.raises(ProblemError, match="d must be an integer >= 2"):
        build("pure-ldp:DE", 1, 1.0)
    with pytest.raises(ProblemError, match="epsilon must be a finite number > 0"):
        build("pure-ldp:DE", 4, float("nan"))


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "channelopt", "audit-mechanism", *args], capture_output=True, text=True, env=env)


def test_cli_exit_codes_and_one_line_errors():
    ok = _cli(f"{HERE}:grr_python", "--d", "5", "--epsilon", "1", "--json")
    assert ok.returncode == 0, ok.stderr
    bad = _cli(f"{HERE}:never_zero_but", "--d", "4", "--epsilon", "1")
    assert bad.returncode == 1 and "violates claim" in bad.stdout
    typo = _cli("pure-ldp:OUF", "--d", "4", "--epsilon", "1")
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1 and "did you mean" in typo.stderr
    missing = _cli(f"{HERE}:no_such_function", "--d", "4", "--epsilon", "1")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


def sorted_triple(x):
    """Three distinct values out of six, sorted: a set-valued report (x is ignored)."""
    return tuple(sorted(int(v) for v in np.random.choice(6, 3, replace=False)))


def test_samples_read_as_sets_give_every_set_one_over_n_choose_k():
    ordered = enumerate_outputs(lambda: sorted_triple(0), PKG)
    as_sets = enumerate_outputs(lambda: sorted_triple(0), PKG, unordered=True)
    assert ordered.paths == 6 * 5 * 4 and as_sets.paths == math.comb(6, 3)
    assert set(as_sets.dist) == set(ordered.dist) and len(as_sets.dist) == 20
    for y, p in as_sets.dist.items():
        assert p == pytest.approx(1 / 20, abs=1e-15) and ordered.dist[y] == pytest.approx(1 / 20, abs=1e-15)


def two_hash_seeds(x):
    """A coin, one more draw on one branch only, then two independent 32-bit seeds."""
    coin = random.random() < 0.5
    if coin:
        random.random() < 0.3
    return coin, random.randint(0, 2**32 - 1), random.randint(0, 2**32 - 1)


def test_sampled_seeds_are_the_same_values_wherever_the_draw_happens():
    # The two seeds come at different tape positions on the two branches of the coin; the sampled
    # values must not depend on that, or a report would look possible under one path only.
    e = enumerate_outputs(lambda: two_hash_seeds(0), PKG)
    assert e.sampled
    seeds = {c: {(a, b) for (cc, a, b) in e.dist if cc == c} for c in (True, False)}
    assert seeds[True] == seeds[False] and len(seeds[True]) == 64 * 64
    firsts = {a for (a, b) in seeds[True]}
    assert firsts == {b for (a, b) in seeds[True]}             # one sample of values per range


def test_a_family_that_does_not_run_as_the_randomizer_is_not_read_bitwise():
    from channelopt.implementations.adapters import Randomizer
    from channelopt.implementations.audit import white_box

    def ue(p, q, d):
        return lambda x: [int(np.random.random() < (p if k == x else q)) for k in range(d)]
    honest = Randomizer("ue", 6, 1.0, run=ue(0.5, 0.2, 6), packages=PKG, family=lambda k: ue(0.5, 0.2, k), bitwise=True)
    ext = white_box(honest, max_paths=8)                       # 2^6 paths > 8: bitwise
    assert "bitwise" in ext.method and "same reports" in ext.method
    np.testing.assert_allclose(ext.bits[0], 0.5, atol=1e-15)
    np.testing.assert_allclose(ext.bits[1], 0.2, atol=1e-15)
    liar = Randomizer("ue", 6, 1.0, run=ue(0.5, 0.2, 6), packages=PKG, family=lambda k: ue(0.5, 0.3, k), bitwise=True)
    with pytest.raises(NotEnumerable, match="does not run as"):
        white_box(liar, max_paths=8)


def two_dim_laplace(x, b=2.0):
    """A non-one-hot encoding (x, x / 2) plus Laplace noise of scale b on each coordinate."""
    return np.array([x, x / 2]) + np.random.laplace(0.0, b, size=2)


def scaled_laplace(x):
    """Noise not added as drawn (doubled): not an additive-Laplace report of the drawn scale."""
    return np.eye(3)[x] + 2 * np.random.laplace(scale=1.0, size=3)


def test_additive_laplace_noise_is_read_exactly_from_the_code():
    # Laplace density ratio sup: sum_k |enc_k(x) - enc_k(x')| / b = 3 * 1.5 / 2 between x = 0 and 3
    a = audit_mechanism(two_dim_laplace, 4, 2.25)
    assert "additive Laplace" in a.method and a.leakage["ldp"] == pytest.approx(2.25, abs=1e-12)
    assert a.verdict == "within claim"
    # one-hot + Laplace(2 / eps): LDP eps exactly; LIP against a brute force over reports y in
    # {-1, 1/2, 2}^d, where |y_k| - |y_k - 1| takes its extreme values -1 and 1 (and 0) exactly
    from itertools import product
    d, eps = 3, 1.3
    prior = np.array([0.2, 0.3, 0.5])
    from channelopt.implementations.extract import additive_laplace
    ext = additive_laplace(lambda x: np.eye(d)[x] + np.random.laplace(scale=2 / eps, size=d), d, PKG)
    b = 2 / eps
    Y = np.array(list(product((-1.0, 0.5, 2.0), repeat=d)))
    logq = np.array([-(np.abs(Y - np.eye(d)[x]).sum(axis=1)) / b for x in range(d)])   # up to a common constant
    logp = np.log(prior @ np.exp(logq))
    assert ext.ldp()[0] == pytest.approx(eps, abs=1e-12)
    assert ext.lip(prior) == pytest.approx(np.abs(logq - logp).max(), abs=1e-12)
    with pytest.raises(NotEnumerable, match="as drawn"):
        additive_laplace(scaled_laplace, 3, PKG)


# --- the peer libraries (extra `peers`) ------------------------------------------------------------

peers = pytest.importorskip("multi_freq_ldpy", reason="multi-freq-ldpy not installed (pip install channelopt[peers])")


@pytest.mark.parametrize("d, eps", [(4, 0.5), (6, 2.0)])
def test_grr_adapters_extract_the_textbook_channel(d, eps):
    for name in ("multi-freq-ldpy:GRR", "pure-ldp:DE"):
        r = build(name, d, eps)
        ext = enumerate_channel(r.run, d, r.packages)
        np.testing.assert_allclose(ext.channel, grr(eps, d), atol=1e-14)


@pytest.mark.parametrize("name, oue", [("multi-freq-ldpy:SUE", False), ("multi-freq-ldpy:OUE", True),
                                       ("pure-ldp:SUE", False), ("pure-ldp:OUE", True)])
def test_unary_adapters_extract_the_textbook_bits(name, oue):
    d, eps = 4, 1.3
    a, b = (0.5, 1 / (math.exp(eps) + 1)) if oue else (math.exp(eps / 2) / (math.exp(eps / 2) + 1), 1 / (math.exp(eps / 2) + 1))
    r = build(name, d, eps)
    full = enumerate_channel(r.run, d, r.packages)
    bits = bitwise_channel(r.family, d, r.packages)
    np.testing.assert_allclose(bits.bits[0], a, atol=1e-14)
    np.testing.assert_allclose(bits.bits[1], b, atol=1e-14)
    assert full.ldp()[0] == pytest.approx(eps, abs=1e-12) and bits.ldp()[0] == pytest.approx(eps, abs=1e-12)
    if name.startswith("pure-ldp"):
        declared = from_bits(d, r.params["p"], r.params["q"], "client p, q")   # read from the library's object
        assert declared.lip(np.full(d, 0.25)) == pytest.approx(full.lip(np.full(d, 0.25)), abs=1e-12)


def test_multi_freq_subset_selection_leaks_the_order_of_its_report():
    # SS puts the true value first whenever it is kept: as released, a report (a, b) cannot come
    # from input b. As a set (what the server counts) it is exactly eps-LDP.
    ordered = audit_mechanism("multi-freq-ldpy:SS", 8, 1.0)
    as_set = audit_mechanism("multi-freq-ldpy:SS-set", 8, 1.0)
    assert ordered.verdict == "violates claim" and ordered.leakage["ldp"] == math.inf
    y, xp = ordered.witness["report"], ordered.witness["x_prime"]
    assert xp in y and y[0] != xp
    assert as_set.verdict == "within claim" and as_set.leakage["ldp"] == pytest.approx(1.0, abs=1e-12)


pure = pytest.importorskip("pure_ldp", reason="pure-ldp not installed (pip install channelopt[peers])")


def test_pure_ldp_rappor_never_clears_a_set_bit_white_and_black_box():
    white = audit_mechanism("pure-ldp:RAPPOR", 4, 1.0)
    assert white.verdict == "violates claim" and white.leakage["ldp"] == math.inf
    black = audit_mechanism("pure-ldp:RAPPOR", 4, 1.0, method="black-box", samples=3000)
    assert black.verdict == "violates claim"


def test_seeded_hash_adapters_say_they_are_exact_given_the_sampled_seeds():
    a = audit_mechanism("pure-ldp:OLH", 4, 1.0)
    assert a.verdict == "within claim" and a.leakage["ldp"] == pytest.approx(1.0, abs=1e-12)
    assert any("sampled" in n for n in a.notes)


def test_a_random_source_the_recorder_cannot_see_is_refused():
    with pytest.raises(NotEnumerable, match="not deterministic"):
        enumerate_outputs(lambda: not_seeded(0), PKG)


def subset_selection(d, eps, k):
    """Pr(S | x) of subset selection read as a set, from its definition (Ye and Barg 2018): the
    k-subsets containing x are e^eps times as likely as those that do not."""
    from itertools import combinations
    sets = list(combinations(range(d), k))
    q = np.array([[(math.exp(eps) if x in S else 1.0) for S in sets] for x in range(d)])
    return q / q.sum(axis=1, keepdims=True), sets


def test_subset_selection_past_the_path_cap_is_read_as_sets_and_equals_its_definition():
    d, eps = 16, 1.0                                           # subset size 4: 15*14*13*12 ordered draws past the cap
    a = audit_mechanism("multi-freq-ldpy:SS-set", d, eps)
    assert "as sets" in a.method and "checked against ordered enumeration at d = 8" in a.method
    k = a.extraction.outputs and len(a.extraction.outputs[0])
    assert k == 4
    q, sets = subset_selection(d, eps, k)
    index = {S: j for j, S in enumerate(sets)}
    got = np.zeros_like(q)
    for j, S in enumerate(a.extraction.outputs):
        got[:, index[S]] = a.extraction.channel[:, j]
    np.testing.assert_allclose(got, q, atol=1e-14)
    assert a.leakage["ldp"] == pytest.approx(eps, abs=1e-12)


def test_adaptive_oracles_past_the_path_cap_are_read_from_the_branch_they_run():
    # multi-freq ADP at d = 16, eps = 0.5 runs OUE: exactly the OUE bits, found bitwise from UE_Client
    d, eps = 16, 0.5
    a = audit_mechanism("multi-freq-ldpy:ADP", d, eps, notions=("ldp", "lip"))
    assert "bitwise" in a.method and a.verdict == "within claim"
    np.testing.assert_allclose(a.extraction.bits[0], 0.5, atol=1e-15)
    np.testing.assert_allclose(a.extraction.bits[1], 1 / (math.exp(eps) + 1), atol=1e-15)
    assert a.leakage["lip"] == pytest.approx(co.encoded.unary.lip_leakage(0.5, 1 / (math.exp(eps) + 1), np.full(d, 1 / d)), abs=1e-12)
    long = audit_mechanism("multi-freq-ldpy:L-ADP", 16, 1.0)
    assert "bitwise" in long.method and long.leakage["ldp"] == pytest.approx(0.5, abs=1e-9)


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_rs_fd_is_eps_between_attribute_neighbours_and_more_for_the_whole_tuple(eps):
    # RS+FD[GRR] on two binary attributes reports the sampled one by GRR at eps' = ln(2 (e^eps - 1) + 1)
    # and a uniform fake value for the other. By hand: over tuples differing in both attributes the
    # ratio is p / q = e^eps'; over tuples differing in one, (e^eps' + 1) / 2 = e^eps.
    a = audit_mechanism("multi-freq-ldpy:RSpFD-GRR", 4, eps)
    amp = math.log(2 * (math.exp(eps) - 1) + 1)
    assert a.leakage["ldp"] == pytest.approx(amp, abs=1e-12) and a.verdict == "violates claim"
    assert a.leakage["ldp (one attribute differs)"] == pytest.approx(eps, abs=1e-12)
    w = a.witness
    assert all(u != v for u, v in zip(np.unravel_index(w["x"], (2, 2)), np.unravel_index(w["x_prime"], (2, 2))))
    shown = tuple(int(v) for v in np.unravel_index(w["x"], (2, 2)))
    assert f"x = {w['x']} {shown}" in str(a) and a.to_dict()["shape"] == [2, 2]


def test_sampling_one_attribute_costs_eps_and_splitting_composes_to_eps():
    for name in ("multi-freq-ldpy:SMP-OUE", "multi-freq-ldpy:SPL-GRR", "multi-freq-ldpy:SPL-OUE"):
        a = audit_mechanism(name, 8, 1.0)                      # shape 2x4
        assert a.verdict == "within claim" and a.leakage["ldp"] == pytest.approx(1.0, abs=1e-12), name


def test_multidimensional_shape_is_checked():
    with pytest.raises(ProblemError, match="product is d = 16"):
        build("multi-freq-ldpy:SMP-GRR", 16, 1.0, shape="3x4")
    with pytest.raises(ProblemError, match="prime"):
        build("multi-freq-ldpy:SMP-GRR", 7, 1.0)
    assert build("multi-freq-ldpy:SMP-GRR", 12, 1.0, shape="2x2x3").shape == (2, 2, 3)


def test_fast_local_hashing_bias_is_what_the_library_server_estimates():
    # pure-ldp FLH draws one of k = 100 fixed hash functions, but its server divides by the q = 1/g of
    # a fresh hash: the exact expectation of its estimate of an absent value is not 0. Its own
    # server on simulated reports agrees with the exact expectation.
    from channelopt.implementations.report import confirm_bias, estimator_variance
    r = build("pure-ldp:FLH", 4, 0.5)
    var = estimator_variance(r, audit_mechanism(r).extraction)
    assert var["bias"] > 0.05
    c = confirm_bias("pure-ldp:FLH", 4, 0.5, var["v"], n=30_000)
    assert abs(c["estimate"] - var["mean"]) < 4 * math.sqrt(var["exact at v"] / c["n"])


def test_sketch_response_is_within_its_budget():
    a = audit_mechanism("pure-ldp:SR", 4, 1.0)
    assert a.verdict == "within claim" and "enumeration" in a.method and a.leakage["ldp"] <= 1.0 + 1e-12
