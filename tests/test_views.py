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
