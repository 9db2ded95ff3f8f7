"""The installed wheel works on its own: built from the checkout, installed into an empty folder
and imported without the checkout (no site .pth files, no editable finder, cwd elsewhere), it
finds its shipped data and reproduces a real-data figure, and reports its version."""

import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_the_wheel_reproduces_a_real_data_figure_outside_the_checkout(tmp_path):
    dist, site, out = tmp_path / "dist", tmp_path / "site", tmp_path / "figs"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next(dist.glob("channelopt-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    env = {"PYTHONPATH": f"{site}:{sysconfig.get_paths()['purelib']}", "PATH": "/usr/bin:/bin"}
    run = lambda *args: subprocess.run([sys.executable, "-S", *args], cwd=tmp_path, env=env,  # noqa: E731
                                       capture_output=True, text=True)
    where = run("-c", "import channelopt; print(channelopt.__file__)")
    assert where.returncode == 0 and where.stdout.startswith(str(site)), where.stdout + where.stderr
    version = run("-m", "channelopt", "--version")
    assert version.returncode == 0 and version.stdout.split() == ["channelopt", wheel.name.split("-")[1]]
    proc = run("-m", "channelopt", "reproduce", "adult-workclass", "--quick", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    rows = (out / "adult-workclass.csv").read_text().splitlines()
    assert len(rows) > 10 and (out / "adult-workclass.png").stat().st_size > 10_000
