"""Clean failure on every path: signals, killed runs, full disks, unwritable outputs, resource
guards and the malformed-input corpus. Each case: one line, the right exit code, nothing left."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import channelopt as co
from channelopt.cli import main

# MAE: an LP per user, 40,000 users (Hamming users whose RR-LIP is feasible take the closed form,
# and a short batch can end before the signal arrives)
TEMPLATE = '[input]\nprior = [0.1, 0.1, 0.2, 0.2, 0.2, 0.2]\n[[privacy]]\nnotion = "lip"\nepsilon = 1.0\n[utility]\nkind = "mae"\n'


def children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead too
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def start_batch(tmp_path, jobs=2):
    (tmp_path / "t.toml").write_text(TEMPLATE)
    np.savetxt(tmp_path / "p.csv", np.random.default_rng(0).dirichlet(np.ones(6), size=40000), delimiter=",")
    cmd = [sys.executable, "-m", "channelopt.cli", "batch", str(tmp_path / "t.toml"), "--priors",
           str(tmp_path / "p.csv"), "--out", str(tmp_path / "res.npz"), "--jobs", str(jobs), "--chunk-size", "200"]
    # SIGINT as a terminal delivers it: a shell that starts the tests in the background leaves
    # SIGINT ignored in its children, and an ignored SIGINT stays ignored across exec
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while time.time() < deadline and not any(p.name.startswith(".res.npz.") for p in tmp_path.iterdir()):
        time.sleep(0.2)
    time.sleep(2.0)   # workers running
    return proc


@pytest.mark.skipif(sys.platform != "linux", reason="process table via pgrep and /proc")
@pytest.mark.parametrize("sig,code,line", [(signal.SIGTERM, 143, "channelopt: terminated"),
                                           (signal.SIGINT, 130, "channelopt: interrupted")])
def test_signals_stop_workers_and_remove_partial_output(tmp_path, sig, code, line):
    proc = start_batch(tmp_path)
    kids = children(proc.pid)
    grandkids = [g for k in kids for g in children(k)]
    assert kids, "the batch should have started worker processes"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.strip().splitlines() == [line]
    time.sleep(1.0)
    assert [p for p in kids + grandkids if alive(p)] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.csv", "t.toml"]


@pytest.mark.skipif(sys.platform != "linux", reason="process table via pgrep and /proc")
def test_after_sigkill_the_next_run_removes_stale_temporary_files(tmp_path):
    proc = start_batch(tmp_path, jobs=1)
    proc.kill()
    proc.communicate(timeout=30)
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".res.npz.")]
    assert stale
    np.savetxt(tmp_path / "q.csv", np.random.default_rng(1).dirichlet(np.ones(6), size=20), delimiter=",")
    assert main(["batch", str(tmp_path / "t.toml"), "--priors", str(tmp_path / "q.csv"),
                 "--out", str(tmp_path / "res.npz")]) == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".res.npz.")]
    assert (tmp_path / "res.npz").exists()


def test_full_disk_gives_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys, problems_dir):
    import channelopt.io as io

    def full(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
    monkeypatch.setattr(io.os, "replace", full)
    code = main(["solve", str(problems_dir / "ldp_uniform_grr.toml"), "--json", "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 1 and err.strip().splitlines() == [f"channelopt: error: No space left on device ({tmp_path / 'r.json'})"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["verify", "--quick", "--theorem", "tdsc-thm3"], ["reproduce", "--quick", "tdsc-fig7"]])
def test_unwritable_output_folder_fails_before_any_work(tmp_path, capsys, command):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    t0 = time.perf_counter()
    code = main(command + ["--out", str(blocker / "sub")])
    assert code == 2 and time.perf_counter() - t0 < 5
    assert "--out" in capsys.readouterr().err


def test_written_files_follow_the_umask(tmp_path, problems_dir):
    old = os.umask(0o022)
    try:
        assert main(["solve", str(problems_dir / "ldp_uniform_grr.toml"), "--out", str(tmp_path / "r.json")]) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "r.json").stat().st_mode & 0o777 == 0o644


MALFORMED = [
    ('[input]\nprior = [0.5, 0.5]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1e300\n[utility]\nkind = "hamming"\n', "at most 700"),
    ('[input]\nprior = [0.5, 0.5]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1e30\n[utility]\nkind = "hamming"\n', "at most 700"),
    ('[input]\nprior = [1e308, 1e308]\nnormalize = true\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n[utility]\nkind = "hamming"\n', None),
    ('[input]\nprior = [0.5, 0.5]\nvalues = [-1e308, 1e308]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n[utility]\nkind = "squared"\n', "overflows"),
    ('[input]\nprior = [0.5, 0.5]\nvalues = [-1e308, 1e308]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n[utility]\nkind = "bayes-mse"\n', "float range"),
    ('[input]\nprior = [0.5, 0.5]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\nepsilon = 2.0\n[utility]\nkind = "hamming"\n', "line 6"),
    ('[input]\npri\u043er = [0.5, 0.5]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n[utility]\nkind = "hamming"\n', "line 2"),
    ("[input]\nprior = " + "[" * 3000 + "]" * 3000 + "\n", "nested 3000 deep"),
    ('[input]\nprior = [0.5, 0.5]\n[output]\nsize = 1000000000000\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n[utility]\nkind = "hamming"\n', "output.size"),
    ("[input]\nprior = [" + ",".join(["1e-5"] * 100000) + ']\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n[utility]\nkind = "hamming"\n', "at most 5000"),
]


@pytest.mark.parametrize("text,match", MALFORMED)
def test_malformed_inputs_give_one_line(tmp_path, capsys, text, match):
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    code = main(["solve", str(path)])
    err = capsys.readouterr().err
    if match is None:   # valid after all: solved without warnings on stderr
        assert code == 0 and err == ""
        return
    assert code == 2 and len(err.strip().splitlines()) == 1 and match in err


@pytest.mark.parametrize("args,match", [
    (["sweep", "{f}", "--epsilon", "0.1:1:1000000000"], "at most 100,000 points"),
    (["sweep", "{f}", "--epsilon", "0.1,1", "--jobs", "100000000000000000000"], "n_jobs"),
])
def test_resource_guards_on_the_command_line(problems_dir, capsys, args, match):
    f = str(problems_dir / "ldp_uniform_grr.toml")
    assert main([a.format(f=f) for a in args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and match in err


def test_api_guards_name_the_argument():
    p = co.Problem(prior=[0.5, 0.5], privacy=[co.LDP(1.0)], utility=co.Distortion("hamming"))
    with pytest.raises(co.ProblemError, match="n_jobs"):
        co.sweep(p, epsilon=[0.5, 1.0], n_jobs=10 ** 6)
    with pytest.raises(co.ProblemError, match="at most 100,000 points"):
        co.sweep(p, epsilon=np.linspace(0.1, 1, 200_000))


def test_time_limit_bounds_the_lp_solver_chain():
    """A limit too short for the LP: the chain stops, says so, and returns a feasible channel."""
    from channelopt.notions import MetricLDP

    P = np.random.default_rng(0).dirichlet(np.ones(100))
    p = co.Problem(prior=P, privacy=[MetricLDP(0.5, grid=[10, 10])], utility=co.Distortion("hamming"))
    r = co.solve(p, time_limit=0.5)
    assert r.status == "local" and co.audit(p, r.channel).ok
    assert any("time limit" in a["message"].lower() for a in r.attempts)


def test_per_pair_budgets_are_capped_like_epsilon():
    with pytest.raises(co.ProblemError, match=r"epsilons\[1\] must be at most 700"):
        co.IDLDP(epsilons=[1.0, 800.0])
    with pytest.raises(co.ProblemError, match="pair_epsilons must be at most 700"):
        co.IDLDP(pair_epsilons=[[0, 800], [800, 0]])
    with pytest.raises(co.ProblemError, match="combine must return pair budgets of at most 700"):
        co.Problem(prior=[0.5, 0.5], privacy=[co.IDLDP(epsilons=[600.0, 600.0], combine=lambda a, b: a + b)])


def test_real_data_ships_with_the_package(tmp_path, monkeypatch):
    """The Adult and Retail data load from the package (no folder outside it), and
    CHANNELOPT_DATA overrides them; a folder without the file is one clear error."""
    from channelopt import data

    monkeypatch.delenv(data.DATA_ENV, raising=False)
    path = data.data_file("adult.csv")
    assert "channelopt" in str(path) and path.is_file()
    joint = data.adult_workclass_income(path)
    assert len(data.adult_rows(path)) == 30162 and np.isclose(joint.prior.sum(), 1.0)
    sets, ids = data.retail_sets(data.data_file("retail_head.dat"))
    assert len(sets) > 20000 and ids.size > 1000
    (tmp_path / "adult.csv").write_text("type_employer,income\nPrivate,>50K\nState-gov,<=50K\n")
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path))
    assert np.allclose(data.adult_workclass_income(data.data_file("adult.csv")).prior, [0.5, 0.5])
    with pytest.raises(co.ProblemError, match="expected the file retail_head.dat"):
        data.data_file("retail_head.dat")


def test_data_dir_flag_overrides_the_shipped_data_and_rejects_bad_folders(tmp_path, monkeypatch, capsys):
    from channelopt import data
    from channelopt.cli import main

    monkeypatch.setenv(data.DATA_ENV, "")          # empty = unset; restored after the test (--data-dir sets it)
    for bad, said in ((tmp_path / "missing", "not a directory"), (tmp_path, "holds neither adult.csv nor retail_head.dat")):
        assert main(["reproduce", "adult-workclass", "--quick", "--data-dir", str(bad), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and said in err and str(bad) in err
        assert not (tmp_path / "o").exists()                     # nothing written
    # a folder with a (tiny) adult.csv is used instead of the shipped one
    folder = tmp_path / "data"
    folder.mkdir()
    with data.open_text(data.data_file("adult.csv")) as f:          # the shipped rows, the first 5,000 twice
        lines = f.readlines()
    (folder / "adult.csv").write_text("".join(lines + lines[1:5001]))
    assert main(["reproduce", "adult-workclass", "--quick", "--out", str(tmp_path / "shipped")]) == 0
    assert main(["reproduce", "adult-workclass", "--quick", "--data-dir", str(folder), "--out", str(tmp_path / "o")]) == 0
    assert data.data_file("adult.csv") == folder.resolve() / "adult.csv"
    assert (tmp_path / "o" / "adult-workclass.csv").read_text() != (tmp_path / "shipped" / "adult-workclass.csv").read_text()


def test_build_adult_script_bad_arguments_exit_2_with_one_line(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).parent.parent / "problems" / "build_adult.py"
    for args in (["--help-me"], ["a", "b"], [str(tmp_path / "none.csv")]):
        proc = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
        assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("option", ["--out", "--channel-out"])
def test_an_output_file_in_a_missing_directory_fails_before_any_work(tmp_path, capsys, problems_dir, option):
    """The check walked up to an existing ancestor and passed; the write after the solve then
    failed with exit 1 and the temporary file's name ("No such file or directory (.../.x.json.
    123.tmp)"). Now exit 2 naming the option, and nothing is created."""
    target = tmp_path / "missing" / "x.out"
    code = main(["solve", str(problems_dir / "ldp_uniform_grr.toml"), option, str(target)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        f"channelopt: error: {option} {str(target)!r}: no directory {str(target.parent)!r} to write it in"]
    assert list(tmp_path.iterdir()) == []


def test_a_bad_entry_is_named_with_its_plain_value(tmp_path, capsys, problems_dir):
    """NumPy 2 scalars repr as np.float64(-0.1): the messages print the number itself."""
    q = tmp_path / "q.csv"
    q.write_text("0.5,0.5\n-0.1,1.1\n")
    path = tmp_path / "p.toml"
    path.write_text('[input]\nprior = [0.5, 0.5]\n[[privacy]]\nnotion = "ldp"\nepsilon = 1.0\n')
    assert main(["audit", str(path), "--channel", str(q)]) == 2
    assert capsys.readouterr().err == "channelopt: error: channel[1][0] must be >= 0, got -0.1\n"


@pytest.mark.parametrize("prior, message", [
    ("0.3,0.3", "prior must sum to 1 (tolerance 1e-09), got 0.6"),
    ("0.5,-0.5,1", "prior[1] must be >= 0, got -0.5"),
])
def test_analyze_names_what_is_wrong_with_a_prior(capsys, prior, message):
    """A prior summing to 0.6 was reported as "prior[0] must be a probability vector" (the check
    for a list of priors, row 0); now the rule it breaks."""
    assert main(["analyze", "relations", "--prior", prior, "--epsilon", "1"]) == 2
    assert capsys.readouterr().err == f"channelopt: error: {message}\n"
