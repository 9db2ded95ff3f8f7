"""The worked examples under examples/ run from a clean folder, finish quickly and print what
their docstrings promise."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))

EXPECT = {
    "01_quickstart.py": ["lip eps=1  hamming", "ldp eps=1  bayes-mse", "certificate:"],
    "02_adult_income.py": ["Pr(>50K | work class)", "(optimal)"],
    "03_audit_a_mechanism.py": ["GRR leakage ldp: 1.000000  [ok]", "by subset-rr"],
    "04_sweep_and_plot.py": ["lip: 25/25 points certified optimal", "wrote"],
    "05_judge_a_closed_form.py": ["tdsc-thm3 (LIP-TDSC Theorem 3): infeasible-somewhere", "ksr-subset-rr", "holds"],
}


def test_there_are_at_least_four_examples_and_each_is_checked():
    assert len(EXAMPLES) >= 4 and {p.name for p in EXAMPLES} == set(EXPECT)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, tmp_path):
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for text in EXPECT[path.name]:
        assert text in proc.stdout, (text, proc.stdout)
    assert "Traceback" not in proc.stderr
