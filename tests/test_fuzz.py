"""Property-based tests (hypothesis) over random problems, and a fuzz of the command line.

Default suite: a few hundred examples, derandomized (the same examples on every run).
`pytest -m fuzz`: the long runs (10,000+ problems; seed with --hypothesis-seed=N to reproduce).

The property: whatever the problem, `solve` either returns a channel that is row-stochastic
within 1e-9, nonnegative, whose independent re-audit is within every budget (AUDIT_TOL
relative), whose objective is the utility of that channel and whose bound is on the right side;
or it says in its status and message that it did not; or it raises a ChannelOptError with a
one-line message. Never another exception.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import channelopt as co
from channelopt.cli import main
from channelopt.notions import NOTIONS
from channelopt.notions.base import AUDIT_TOL

STATUSES = {"optimal", "local", "inaccurate", "infeasible", "solver-failed"}
DEFAULT = settings(max_examples=120, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FUZZ = settings(max_examples=4000, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

LINEAR_NOTIONS = [name for name, cls in NOTIONS.items() if cls.linear_form]
HOMOGENEOUS = [name for name, cls in NOTIONS.items() if cls.homogeneous]
DISTORTIONS = ["hamming", "mae", "squared", "distortion"]
BAYES = ["bayes-mse", "histogram-mse", "mutual-information", "map"]


def _vector(draw, d, tiny=True):
    """A probability vector with possibly near-zero entries (down to ~1e-9) or near-degenerate."""
    parts = [st.floats(1e-3, 1.0)]
    if tiny:
        parts.append(st.sampled_from([1e-9, 3e-9, 1e-7, 1e-5]))
    raw = np.array(draw(st.lists(st.one_of(*parts), min_size=d, max_size=d)))
    return (raw / raw.sum()).tolist()


@st.composite
def eps_(draw):
    return draw(st.one_of(st.floats(1e-3, 20.0), st.sampled_from([1e-3, 0.1, 1.0, 5.0, 20.0, 40.0, 100.0, 700.0])))


@st.composite
def privacy_table(draw, kind, d, latent):
    e = draw(eps_())
    t = {"notion": kind}
    if kind in ("ldp", "lip", "di", "mil", "mip", "wc-lip"):
        t["epsilon"] = e
    elif kind == "alip":
        t["epsilon_lower"], t["epsilon_upper"] = e, draw(eps_())
    elif kind == "id-ldp":
        t["epsilons"] = [draw(st.sampled_from([e, 2 * e, 0.5 * e + 0.01])) for _ in range(d)]
        t["combine"] = draw(st.sampled_from(["min", "avg"]))
    elif kind == "bp-lip":
        k = latent["conditional"].__len__() if latent else d
        t["epsilon"] = e
        t["priors"] = [_vector(draw, k, tiny=False) for _ in range(draw(st.integers(1, 3)))]
    elif kind == "pufferfish":
        t["epsilon"] = e
        if draw(st.booleans()):
            k = draw(st.integers(2, 3))
            t["scenarios"] = [{"prior": _vector(draw, k, tiny=False),
                               "conditional": [_vector(draw, d, tiny=False) for _ in range(k)]}
                              for _ in range(draw(st.integers(1, 2)))]
    elif kind == "approx-lip":
        t["epsilon"] = e
        t["delta"] = draw(st.floats(0.0, 0.2))
        t["form"] = draw(st.sampled_from(["pointwise", "set"]))
    elif kind not in ("mil", "mip"):  # any other registered notion: its own example
        k = len(latent["conditional"]) if latent else None
        t = NOTIONS[kind].example(d, e, np.random.default_rng(draw(st.integers(0, 2 ** 16))), k)
    return t


@st.composite
def problems(draw, bayes: bool):
    d = draw(st.integers(2, 5 if bayes else 16))
    latent = None
    if draw(st.integers(0, 3)) == 0:
        k = draw(st.integers(2, 4))
        latent = {"prior": _vector(draw, k, tiny=False),
                  "conditional": [_vector(draw, d, tiny=True) for _ in range(k)]}
    if bayes:
        kinds = [k for k in HOMOGENEOUS if k not in ("alip", "wc-lip")] + (["alip"] if latent is None else [])
    else:
        kinds = LINEAR_NOTIONS
    n_notions = draw(st.integers(1, 2))
    tables = [draw(privacy_table(draw(st.sampled_from(kinds)), d, latent)) for _ in range(n_notions)]
    if latent is not None:
        tables = [t for t in tables if t["notion"] not in ("wc-lip", "alip")] or [{"notion": "lip", "epsilon": 1.0}]
    utility = {"kind": draw(st.sampled_from(BAYES if bayes else DISTORTIONS))}
    if utility["kind"] == "distortion":
        utility["matrix"] = draw(st.lists(st.lists(st.floats(0, 10), min_size=d, max_size=d), min_size=d, max_size=d))
    if utility["kind"] == "bayes-mse" and draw(st.booleans()):
        utility["weight"] = draw(st.sampled_from([1.0, -2.5, 1e-3, 1e4]))
        utility["offset"] = draw(st.sampled_from([0.0, 1e5, -1e6, 1e12]))
    doc = {"input": {}, "privacy": tables, "utility": utility}
    if draw(st.booleans()):   # values far from 0..d-1 (distinct: metric-ldp uses them by default)
        scale = draw(st.sampled_from([1e-3, 1.0, 1e4, 1e6]))
        shift = draw(st.sampled_from([0.0, 1e5, -1e6]))
        doc["input"]["values"] = (shift + scale * np.cumsum(draw(st.lists(st.floats(0.1, 3.0), min_size=d, max_size=d)))).tolist()
    if latent is None:
        doc["input"]["prior"] = _vector(draw, d)
    else:
        doc["latent"] = latent
    return doc


def check_result(problem: co.Problem, r: co.Result) -> None:
    assert r.status in STATUSES
    if r.status == "infeasible":   # only with a proof channelopt checked
        assert r.certificate is not None and r.certificate.method in ("farkas", "structural"), r.message
    if r.status not in ("optimal", "local"):
        assert r.message, f"status {r.status} without a reason"
        return
    q = r.full_channel          # every output of the problem (unused ones are dropped from r.channel)
    assert q.shape[0] == problem.d and np.all(np.isfinite(q))
    assert q.min() >= 0.0
    assert np.abs(q.sum(axis=1) - 1).max() <= 1e-9
    a = co.audit(problem, q)
    assert all(a.satisfied.values()), (a.leakage, r.leakage)
    # an independent recomputation for the plain notions (ratios straight from the definitions)
    # (to the documented tolerance: log-ratios within AUDIT_TOL * max(1, eps) of the budget)
    for key, notion in zip(r.leakage, problem.privacy):
        tol = np.exp(AUDIT_TOL * max(1.0, getattr(notion, "epsilon", 1.0)))
        if notion.name == "ldp":
            cols = q[:, q.max(axis=0) > 0]
            assert np.all(cols.max(axis=0) <= np.exp(notion.epsilon) * cols.min(axis=0) * tol)
        if notion.name == "lip" and problem.latent is None:
            lam = problem.prior @ q
            used = lam > 0
            lift = q[:, used] / lam[used]
            assert lift.max() <= np.exp(notion.epsilon) * tol and lift.min() >= np.exp(-notion.epsilon) / tol
    assert r.objective == pytest.approx(problem.utility.evaluate(problem, q), rel=1e-9, abs=1e-12)
    # the objective is the channel's, by an implementation of each utility written here
    assert r.objective == pytest.approx(independent_objective(problem, q), rel=1e-7, abs=1e-9)
    c = r.certificate or {}
    scale = max(1.0, abs(r.objective))
    if "lower_bound" in c:
        assert c["lower_bound"] <= r.objective + 1e-8 * scale
    if "upper_bound" in c:
        assert c["upper_bound"] >= r.objective - 1e-8 * scale
    if r.status == "optimal" and r.certificate is not None and r.certificate.bound is not None:
        unit, gain = gain_units(problem, r.objective)
        assert abs(r.objective - r.certificate.bound) / unit <= 1e-7 * max(1.0, abs(gain)) * (1 + 1e-9), \
            "optimal with an open gap"


def gain_units(problem: co.Problem, objective: float) -> tuple[float, float]:
    """(one gain unit in the utility's own units, the objective in gain units): the status rule
    (docs/reliability.md) compares a Bayes utility's gap in gain units, free of the values' scale.
    bayes-mse: the MSE over the prior variance of the target, gain 1 - MSE/var; histogram-MSE:
    gain 1 - MSE; mutual information: gain I - H(X) (normalized: (I/H - 1) H); MAP: the
    accuracy itself. Distortions: their own units (gain = the objective)."""
    u, P = problem.utility, problem.prior
    if u.kind == "bayes-mse":
        h = u.weight * problem.values
        var = float(P @ (h - P @ h) ** 2)
        return var, 1.0 - objective / var
    if u.kind == "histogram-mse":
        return 1.0, 1.0 - objective
    if u.kind == "mutual-information":
        H = float(-(P[P > 0] * np.log(P[P > 0])).sum())
        return (1.0 / H, (objective - 1.0) * H) if u.normalized else (1.0, objective - H)
    return 1.0, objective


def independent_objective(problem: co.Problem, q: np.ndarray) -> float:
    """Each utility from its definition (not channelopt.utility)."""
    u, P, v = problem.utility, problem.prior, problem.values
    joint = P[:, None] * q
    lam = joint.sum(axis=0)
    used = lam > 0
    if u.kind == "hamming":
        return float(1.0 - sum(joint[k, k] for k in range(min(problem.d, problem.m))))
    if u.kind in ("mae", "squared"):
        diff = v[:, None] - v[None, :q.shape[1]]
        return float((joint * (np.abs(diff) if u.kind == "mae" else diff ** 2)).sum())
    if u.kind == "distortion":
        return float((joint * np.asarray(u.matrix)).sum())
    post = joint[:, used] / lam[used]
    if u.kind == "bayes-mse":
        # an MSE does not change when h shifts: the offset is left out here (in floating point,
        # h = v + 1e12 would keep only 4 decimals of v); test_offset_invariance checks the offset
        h = u.weight * v
        est = h @ post                                             # the curator's MMSE estimate per output
        return float((joint[:, used] * (h[:, None] - est[None, :]) ** 2).sum())
    if u.kind == "histogram-mse":
        return float(1.0 - (lam[used] * (post ** 2).sum(axis=0)).sum())
    if u.kind == "mutual-information":
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(joint > 0, joint * np.log(joint / (P[:, None] * lam[None, :])), 0.0)
        return float(t.sum())
    return float(joint.max(axis=0).sum())   # map


def solve_doc(doc: dict) -> None:
    try:
        problem = co.problem_from_dict(doc)
    except co.ProblemError as e:  # a generated combination the model rejects: a clear message
        assert "\n" not in str(e) and str(e)
        assume(False)
    try:
        r = co.solve(problem, bayes_options={"starts": 3})
    except co.ChannelOptError as e:
        event(f"error: {type(e).__name__}")
        assert str(e) and "\n" not in str(e).strip()
        return
    event(f"status: {r.status}")
    check_result(problem, r)


@DEFAULT
@given(problems(bayes=False))
def test_random_linear_problems(doc):
    solve_doc(doc)


@DEFAULT
@given(problems(bayes=True))
def test_random_bayes_problems(doc):
    solve_doc(doc)


@pytest.mark.fuzz
@FUZZ
@given(problems(bayes=False))
def test_fuzz_linear_problems(doc):
    solve_doc(doc)


@pytest.mark.fuzz
@FUZZ
@given(problems(bayes=True))
def test_fuzz_bayes_problems(doc):
    solve_doc(doc)


# --- the command line on malformed input --------------------------------------------------------

def run_cli(args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main(args)
    return rc, out.getvalue(), err.getvalue()


def assert_clean_failure(rc, out, err, outdir):
    assert rc in (0, 1, 2)
    assert "Traceback" not in err
    if rc == 2:
        assert err.count("\n") == 1 and err.startswith("channelopt: error:") and not out
    leftovers = [f for f in os.listdir(outdir) if f.startswith(".")]
    assert not leftovers, leftovers


VALID = """
[input]
prior = [0.2, 0.3, 0.5]
labels = ["a", "b", "c"]
values = [0.0, 1.0, 2.0]

[output]
size = 3

[[privacy]]
notion = "lip"
epsilon = 1.0

[[privacy]]
notion = "id-ldp"
epsilons = [1.0, 2.0, 2.0]
combine = "min"

[utility]
kind = "hamming"

[solver]
name = "auto"
"""

JUNK_VALUES = st.one_of(st.text(max_size=8), st.integers(-10 ** 30, 10 ** 30), st.floats(allow_nan=True),
                        st.booleans(), st.lists(st.floats(allow_nan=True), max_size=4),
                        st.sampled_from(["1e400", "[[1, 2], [3]]", '"\u00e9\u4e2d\U0001f600"', "{}", "[]",
                                         "inf", "nan", "-0.0", "1e-400"]))


def toml_value(v) -> str:
    if isinstance(v, str) and v[:1] in '["{' or v in ("inf", "nan", "-0.0", "1e400", "1e-400"):
        return v
    return json.dumps(v)


@st.composite
def mutated_problem(draw):
    lines = VALID.strip().splitlines()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["replace-value", "drop-line", "insert-junk", "unicode-label"]))
        if action == "replace-value" and "=" in lines[i]:
            key = lines[i].split("=")[0]
            lines[i] = f"{key}= {toml_value(draw(JUNK_VALUES))}"
        elif action == "drop-line":
            del lines[i]
        elif action == "insert-junk":
            lines.insert(i, draw(st.text(max_size=30)))
        else:
            lines = [('labels = ["\u00e9", "\u4e2d", "\U0001f600"]' if ln.startswith("labels") else ln) for ln in lines]
        if not lines:
            break
    return "\n".join(lines)


def _write(tmp_path, name, data):
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    else:
        p.write_text(data, encoding="utf-8", errors="surrogatepass")
    return p


def cli_case(tmp_path, problem_text, channel_data, command):
    outdir = tmp_path / "out"
    outdir.mkdir(exist_ok=True)
    for f in outdir.iterdir():
        f.unlink()
    prob = _write(tmp_path, "p.toml", problem_text)
    chan = _write(tmp_path, "q.csv", channel_data)
    text = channel_data if isinstance(channel_data, str) else channel_data.decode("latin-1")
    args = {"solve": ["solve", str(prob), "--json", "--out", str(outdir / "r.json")],
            "audit": ["audit", str(prob), "--channel", str(chan)],
            "batch": ["batch", str(prob), "--priors", str(chan), "--out", str(outdir / "b.npz")],
            "sweep": ["sweep", str(prob), "--epsilon", text.split("\n")[0] or "x", "--out", str(outdir / "s.csv")],
            "relations": ["analyze", "relations", "--prior", text.split("\n")[0] or "x", "--epsilon", "1"],
            "watchdog": ["analyze", "watchdog", "--joint", str(chan), "--eps-lower", "1", "--eps-upper", "1",
                         "--no-optimum"]}[command]
    rc, out, err = run_cli(args)
    assert_clean_failure(rc, out, err, outdir)
    if rc == 2:
        assert not any(outdir.iterdir())  # nothing written, not even partly


COMMANDS = ["solve", "audit", "batch", "sweep", "relations", "watchdog"]
CHANNEL_TEXT = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64),
    st.just("0.5,0.5\n0.5\n"),
    st.just("1e400,0\n0,1\n"),
    st.just("0.3,0.3,0.4\n0.3,0.3,0.4\n0.3,0.3,0.4\n"),
    st.lists(st.lists(st.floats(allow_nan=True), min_size=1, max_size=4), min_size=1, max_size=4).map(
        lambda rows: "\n".join(",".join(repr(v) for v in r) for r in rows)))


@settings(max_examples=80, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=st.one_of(mutated_problem(), st.binary(max_size=200), st.text(max_size=200)),
       channel=CHANNEL_TEXT, command=st.sampled_from(COMMANDS))
def test_cli_never_tracebacks(tmp_path, problem, channel, command):
    cli_case(tmp_path, problem, channel, command)


@pytest.mark.fuzz
@settings(max_examples=3000, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(problem=st.one_of(mutated_problem(), st.binary(max_size=400), st.text(max_size=400)),
       channel=CHANNEL_TEXT, command=st.sampled_from(COMMANDS))
def test_fuzz_cli(tmp_path, problem, channel, command):
    cli_case(tmp_path, problem, channel, command)


@pytest.mark.parametrize("notion", ["lip", "ldp", "di"])
def test_offset_invariance_in_exact_arithmetic(notion):
    """A shift of h(X) (offset) or of the values changes no MSE: the optimum for offset 1e6 and
    shifted values equals the offset-0 one, and the returned channel's MSE, recomputed in exact
    rational arithmetic from its (exact binary) entries, equals the reported objective."""
    from fractions import Fraction as F

    P, v = [0.2, 0.3, 0.5], [0.0, 1.0, 3.0]
    make = {"lip": co.LIP, "ldp": co.LDP, "di": co.DI}[notion]
    base = co.solve(co.Problem(prior=P, values=v, privacy=[make(1.0)], utility=co.Bayes("bayes-mse")))
    for offset, shift in ((1e6, 0.0), (0.0, -1e5), (1e12, 7.0)):
        p = co.Problem(prior=P, values=[x + shift for x in v], privacy=[make(1.0)],
                       utility=co.Bayes("bayes-mse", offset=offset))
        r = co.solve(p)
        assert r.status == base.status == "optimal"
        assert r.objective == pytest.approx(base.objective, rel=1e-9)
        q = [[F(x) for x in row] for row in r.channel]
        Pf = [F(x) for x in p.prior]
        h = [F(x) * F(p.utility.weight) + F(offset) for x in p.values]
        mse = F(0)
        for y in range(len(q[0])):
            lam = sum(Pf[x] * q[x][y] for x in range(3))
            if lam == 0:
                continue
            est = sum(Pf[x] * q[x][y] * h[x] for x in range(3)) / lam
            mse += sum(Pf[x] * q[x][y] * (h[x] - est) ** 2 for x in range(3))
        assert float(mse) == pytest.approx(r.objective, rel=1e-12)
