"""Results for people: the text summary, the notebook view, the DataFrame, the plot, and the CLI's
summary of large channels (issue: working with results, parts 1 and 5)."""

from __future__ import annotations

import numpy as np
import pytest

import channelopt as co
from channelopt.cli import main
from channelopt.io import read_channel


@pytest.fixture
def result(problems_dir):
    p = co.load_problem(problems_dir / "geo_ind_grid.toml")
    return p, co.solve(p)


def test_text_summary_is_what_the_cli_prints(result, problems_dir, capsys):
    p, r = result
    text = str(r)
    for lab in p.labels:
        assert f"  {lab:>2}  " in text
    assert "leakage metric-ldp: 0.7  [ok]" in text and "certificate: lp-duality, lower bound" in text
    main(["solve", str(problems_dir / "geo_ind_grid.toml")])
    printed = capsys.readouterr().out.splitlines()
    assert printed[1:-1] == text.splitlines()[:-1]      # the same lines but the timing


def test_notebook_view_has_labels_leakage_and_certificate(result):
    p, r = result
    html = r._repr_html_()
    assert all(f"<th>{lab}</th>" in html for lab in p.labels)
    assert "metric-ldp" in html and "[ok]" in html and "lp-duality" in html and "<table>" in html
    bad = co.Result(status="inaccurate", channel=np.eye(2), objective=0.0, leakage={"ldp": 3.0},
                    satisfied={"ldp": False})
    assert "VIOLATED" in bad._repr_html_() and "VIOLATED" in str(bad)


def test_frame_and_plot_use_the_labels(result):
    pd = pytest.importorskip("pandas")
    p, r = result
    df = r.to_frame()
    assert isinstance(df, pd.DataFrame) and list(df.index) == list(p.labels) and df.shape == r.channel.shape
    np.testing.assert_array_equal(df.to_numpy(), r.channel)
    import matplotlib

    matplotlib.use("Agg")
    ax = r.plot()
    assert len(ax.images) == 1 and [t.get_text() for t in ax.get_yticklabels()] == list(p.labels)
    np.testing.assert_array_equal(ax.images[0].get_array(), r.channel)


def test_large_channels_are_summarized_unless_full(tmp_path, capsys):
    d = 13
    path = tmp_path / "big.toml"
    path.write_text(f'[input]\nprior = {[1 / d] * d}\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n'
                    '[utility]\nkind = "hamming"\n')
    assert main(["solve", str(path), "--channel-out", str(tmp_path / "q.csv")]) == 0
    out = capsys.readouterr().out
    assert "13 x 13, each row's largest entries" in out and max(len(line) for line in out.splitlines()) < 120
    q = read_channel(tmp_path / "q.csv")
    assert q.shape == (13, 13) and co.audit(co.load_problem(path), q).ok
    assert main(["solve", str(path), "--full"]) == 0
    full = capsys.readouterr().out
    assert sum(1 for line in full.splitlines() if line.count("0.") >= 13) == 13


def test_sweeps_record_their_points_as_data(problems_dir, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    p = co.load_problem(problems_dir / "lip_tdsc_3symbol.toml")
    s = co.sweep(p, epsilon=[0.5, 1.0, 2.0])
    assert s.param == "epsilon" and s.values == [0.5, 1.0, 2.0] and len(s) == 3
    df = s.to_frame()
    assert isinstance(df, pd.DataFrame) and list(df["epsilon"]) == [0.5, 1.0, 2.0]
    assert list(df["objective"]) == [r.objective for r in s] and "leakage_lip" in df
    assert all(r["gap"] is not None for r in s.rows())
    import matplotlib

    matplotlib.use("Agg")
    ax = s.plot()
    assert ax.get_xlabel() == "epsilon (nats)" and len(ax.lines) >= 2
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [r.objective for r in s])
    pri = co.sweep(p, priors=[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    assert pri.param == "prior" and np.allclose(pri.values[1], [0.1, 0.1, 0.8])
    # with --out the CLI prints a summary, not the table
    out = tmp_path / "s.csv"
    assert main(["sweep", str(problems_dir / "lip_tdsc_3symbol.toml"), "--epsilon", "0.5:2:4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed == [f"4 points: 4 optimal; table written to {out}"]


def on_terminal(cmd, timeout=300):
    """Run cmd with stderr on a pseudo-terminal of a real terminal's size: (process, what the
    terminal showed)."""
    import fcntl
    import os
    import struct
    import subprocess
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=slave, timeout=timeout)
    os.close(slave)
    seen = b""
    try:
        while chunk := os.read(master, 4096):
            seen += chunk
    except OSError:   # the terminal closed
        pass
    os.close(master)
    return proc, seen


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal_not_in_a_pipe(problems_dir):
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "channelopt.cli", "sweep", str(problems_dir / "lip_tdsc_3symbol.toml"),
           "--epsilon", "0.5:2:6"]
    proc, seen = on_terminal(cmd, timeout=120)
    assert proc.returncode == 0 and b"sweep" in seen and b"6/6" in seen
    piped = subprocess.run(cmd, capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == b""
    forced = subprocess.run(cmd + ["--progress"], capture_output=True, timeout=120)
    assert b"6/6" in forced.stderr


def test_plot_helpers_return_axes_with_the_expected_artists(problems_dir):
    import matplotlib

    matplotlib.use("Agg")
    from channelopt import plots
    from channelopt.theorems import get, verify

    p = co.load_problem(problems_dir / "lip_tdsc_3symbol.toml")
    eps = [0.5, 1.0, 2.0]
    ax = plots.tradeoff(p, [co.LIP(1.0), co.LDP(1.0)], eps)
    curves = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert [c.get_label() for c in curves] == ["lip", "ldp"]
    for c, n in zip(curves, (co.LIP, co.LDP)):   # each curve is the certified optimum per eps
        want = [co.solve(co.Problem(prior=p.prior, privacy=[n(e)], utility=p.utility)).objective for e in eps]
        np.testing.assert_allclose(c.get_ydata(), want, rtol=1e-9)
    r = co.solve(p)
    ax = plots.audit_bars(p, r.channel)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    heights = [b.get_height() for b in ax.patches]
    m = co.audit(p, r.channel).measures
    assert heights[labels.index("lip")] == pytest.approx(m["lip"]) and heights[labels.index("ldp")] == pytest.approx(m["ldp"])
    assert len(ax.collections) == 1   # the lip budget line
    rep = verify.run([get("tdsc-thm3")], quick=True, progress=False)[0]
    ax = plots.verify_map(rep)
    assert ax.get_xlabel() == rep.theorem.axes[0] and rep.klass in ax.get_title()
    assert sum(len(c.get_offsets()) for c in ax.collections) > 0


def test_analyze_prints_explained_values_with_units(capsys, tmp_path):
    import json

    assert main(["analyze", "relations", "--prior", "0.2,0.3,0.5", "--epsilon", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["analyze", "relations", "--prior", "0.2,0.3,0.5", "--epsilon", "1"]) == 0
    text = capsys.readouterr().out
    assert "{" not in text and "'" not in text      # no Python reprs
    line = next(s for s in text.splitlines() if s.startswith("LDP leakage of any eps-LIP channel"))
    assert "(CA-LIP Prop 1)" in line and f"exact {doc['lip_to_ldp']['exact']:.6g} nats" in line
    J = tmp_path / "joint.csv"
    J.write_text("0.1,0.2,0.1\n0.3,0.1,0.2\n")
    assert main(["analyze", "watchdog", "--joint", str(J), "--eps-lower", "1", "--eps-upper", "0.3"]) == 0
    text = capsys.readouterr().out
    assert "normalized mutual information" in text and "{" not in text


def test_reproduce_list_names_paper_figure_and_content(capsys):
    from channelopt import figures
    from channelopt.references import REFERENCES

    assert main(["reproduce", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(figures.figure_ids())
    for line, fid in zip(lines, figures.figure_ids()):
        paper, result, what = figures.describe(fid)
        assert line.startswith(fid) and paper in REFERENCES and result and what
    assert "LIP-TDSC  Fig 7" in lines[0]


def _skewed():
    """LDP Hamming with a skewed prior: the optimum reports only the most probable symbols (subset
    RR with k < d), so some outputs are never used."""
    return co.Problem(prior=[0.7, 0.2, 0.05, 0.05], privacy=[co.LDP(0.5)], utility=co.Distortion("hamming"))


def test_unused_outputs_are_dropped_and_said_unless_fixed():
    p = _skewed()
    r = co.solve(p)
    fixed = co.solve(co.Problem(prior=p.prior, privacy=p.privacy, utility=p.utility, output_size=4))
    assert fixed.outputs is None and fixed.channel.shape == (4, 4)
    unused = np.flatnonzero(fixed.channel.max(axis=0) == 0)
    assert unused.size > 0                                      # the case has unused outputs
    assert r.outputs == tuple(y for y in range(4) if y not in unused)
    assert r.channel.shape == (4, 4 - unused.size) and r.channel.min(axis=0).max() > 0
    np.testing.assert_array_equal(r.full_channel, fixed.channel)
    # the columns kept are the same conditional distributions: same utility, same leakage
    assert p.utility.evaluate(p, r.full_channel) == pytest.approx(r.objective, rel=1e-12)
    assert co.audit(p, r.channel).leakage == pytest.approx(r.leakage)
    text = str(r)
    assert f"{unused.size} of 4 outputs unused" in text and "channel q[x][y]" in text
    assert r.to_frame().columns.tolist() == [f"y{y}" for y in r.outputs]
    assert all(f"<th>y{y}</th>" in r._repr_html_() for y in r.outputs)
    js = r.to_json()
    assert js["outputs"] == list(r.outputs) and js["output_size"] == 4 and len(js["channel"][0]) == len(r.outputs)
    # output.fixed = true in a problem file, or Problem(output_fixed=True), keeps every column
    assert co.solve(co.Problem(prior=p.prior, privacy=p.privacy, utility=p.utility, output_fixed=True)).channel.shape == (4, 4)


def test_unused_outputs_dropped_on_the_cli_and_in_sweeps(tmp_path, capsys):
    p = _skewed()
    path = tmp_path / "skewed.toml"
    path.write_text(co.io.problem_to_toml(p))
    assert main(["solve", str(path)]) == 0
    assert "outputs unused (no input reaches them) and dropped" in capsys.readouterr().out
    path.write_text(co.io.problem_to_toml(p) + "\n[output]\nfixed = true\n")
    assert main(["solve", str(path), "--json"]) == 0
    import json
    assert "outputs" not in json.loads(capsys.readouterr().out)
    s = co.sweep(p, epsilon=[0.5, 0.6])
    assert all(r.outputs is not None and r.full_channel.shape == (4, 4) for r in s)


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_bench_and_reproduce_show_bars_on_a_terminal(tmp_path):
    import subprocess
    import sys

    bench = [sys.executable, "-m", "channelopt", "bench", "--notions", "ldp", "--utilities", "hamming",
             "--sizes", "4,8", "--solvers", "HIGHS", "--baselines", "none", "--out", str(tmp_path / "b")]
    proc, seen = on_terminal(bench)
    assert proc.returncode == 0 and b"bench" in seen and b"2/2" in seen
    assert proc.stdout.count(b"\nldp ") + proc.stdout.startswith(b"ldp ") >= 2        # the rows still on stdout
    piped = subprocess.run(bench, capture_output=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == b""
    repro = [sys.executable, "-m", "channelopt", "reproduce", "tdsc-fig7", "--quick", "--out", str(tmp_path / "f")]
    proc, seen = on_terminal(repro)
    assert proc.returncode == 0 and b"reproduce" in seen and b"points" in seen and b"pt" in seen
    piped = subprocess.run(repro, capture_output=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == b""


def test_figures_draw_their_curves_with_the_plot_helper(tmp_path, monkeypatch):
    """A reproduce figure's series are drawn by plots.curve (its infeasible points as red crosses)."""
    import matplotlib

    matplotlib.use("Agg")
    from channelopt import plots
    from channelopt.figures import Figure

    calls = []
    real = plots.curve
    monkeypatch.setattr(plots, "curve", lambda *a, **k: calls.append(k) or real(*a, **k))
    fig = Figure("t", "test", "eps", "mse")
    for x in (1.0, 2.0):
        fig.add("a", "optimum", x, 1 / x)
        fig.add("a", "closed form", x, 2 / x, feasible=x > 1)
    fig.plot(tmp_path / "t.png")
    assert [c["label"] for c in calls] == ["optimum", "closed form"]
    assert calls[1]["violated"] == [True, False] and (tmp_path / "t.png").stat().st_size > 0
    ax = plots.curve([1, 2], [1, 2], violated=[True, False], certified=[True, False])
    assert [line.get_label() for line in ax.lines] == ["_child0", "certified optimum", "not certified", "violates the notion"]


def test_a_large_channel_shows_its_first_and_last_rows_in_the_terminal_and_the_notebook():
    """A channel of 2000 x 2000 (GRR, built here): the summary shows the first SUMMARY_ROWS - 5 rows,
    how many are left out, and the last 5, each with its largest entry on the diagonal; the notebook
    view the same rows (a few kB, where the whole table was 4 million cells); `full` every row."""
    d, e = 2000, np.e
    q = (np.eye(d) * (e - 1) + 1) / (e + d - 1)
    r = co.Result(status="optimal", channel=q, objective=0.0, leakage={"ldp": 1.0}, satisfied={"ldp": True})
    n = r.SUMMARY_ROWS
    lines = str(r).splitlines()
    rows = [line for line in lines if line.lstrip().split("  ")[0].isdigit()]
    assert [int(line.split()[0]) for line in rows] == [*range(n - 5), *range(d - 5, d)]
    assert all(line.split()[1] == f"y{line.split()[0]}:" for line in rows)      # the diagonal first
    assert f"... {d - n} more rows ..." in str(r) and len(lines) < n + 10
    html = r._repr_html_()
    assert len(html) < 20_000 and f"{d - n} more rows" in html and "<th>1999</th>" in html and "<th>100</th>" not in html
    assert len(r.summary(full=True).splitlines()) > d
    small = co.Result(status="optimal", channel=np.full((64, 64), 1 / 64), objective=0.0, leakage={}, satisfied={})
    assert small._repr_html_().count("<td>") == 64 * 64                   # a whole table up to HTML_MAX entries
