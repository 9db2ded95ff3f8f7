"""Docs that cannot drift: the README's and the user guide's shell examples are run and their output compared with
what the README shows (timings and round-off-sized gaps aside); every docs/ page the package
and the docs point to exists, and nothing points outside the project."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def shown_commands(text: str):
    """(command, expected output lines) for each `$ ...` line of a fenced block that shows output."""
    blocks, inside = [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if inside is None:
                inside = []
            else:
                blocks.append(inside)
                inside = None
        elif inside is not None:
            inside.append(line)
    for lines in blocks:
        i = 0
        while i < len(lines):
            if lines[i].startswith("$ "):
                cmd, out = lines[i][2:], []
                i += 1
                while i < len(lines) and not lines[i].startswith("$ "):
                    out.append(lines[i])
                    i += 1
                yield cmd, out
            else:
                i += 1


def normalized(lines):
    out = []
    for line in lines:
        line = re.sub(r"(via \S+), [0-9.]+ s$", r"\1, <time> s", line)
        line = re.sub(r"gap (\d\.\d+e-(1[3-9]|[2-9]\d))", "gap <round-off>", line)
        out.append(line.rstrip())
    return out


CASES = [(c, o) for c, o in shown_commands((ROOT / "README.md").read_text())]
GUIDE = [(c, o) for c, o in shown_commands((ROOT / "docs" / "guide.md").read_text())]


def test_the_readme_shows_outputs_to_check():
    assert sum(bool(o) for _, o in CASES) >= 2
    assert sum(bool(o) for _, o in GUIDE) >= 4


@pytest.mark.parametrize("cmd,expected", [(c, o) for c, o in GUIDE if o], ids=lambda v: v if isinstance(v, str) else "")
def test_user_guide_example_output_is_what_the_guide_shows(cmd, expected, tmp_path):
    test_readme_example_output_is_what_the_readme_shows(cmd, expected, tmp_path)


@pytest.mark.parametrize("cmd,expected", [(c, o) for c, o in CASES if o or c.startswith("printf")],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_readme_example_output_is_what_the_readme_shows(cmd, expected, tmp_path):
    shutil.copytree(ROOT / "problems", tmp_path / "problems")
    exe = str(Path(sys.executable).parent / "channelopt")
    shell_cmd = re.sub(r"^channelopt\b", lambda _: f'"{exe}"' if Path(exe).exists() else
                       f'"{sys.executable}" -m channelopt', cmd)
    if cmd.startswith("printf"):
        subprocess.run(cmd, shell=True, cwd=tmp_path, check=True)
        return
    for prep, _ in CASES:                 # files the README creates before (e.g. q.csv)
        if prep.startswith("printf"):
            subprocess.run(prep, shell=True, cwd=tmp_path, check=True)
    proc = subprocess.run(shell_cmd, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert normalized(proc.stdout.splitlines()) == normalized(expected)


def test_every_referenced_docs_page_exists_and_nothing_points_outside_the_project():
    texts = {p: p.read_text() for p in [*ROOT.glob("channelopt/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md"]}
    for path, text in texts.items():
        for page in re.findall(r"docs/([\w\-/]+\.md)", text):
            assert (ROOT / "docs" / page).exists(), (path, page)
        assert "shared/" not in text and "../papers" not in text, path


def test_the_package_is_ruff_clean_under_the_project_rules():
    """The rule set is in pyproject.toml ([tool.ruff]); `ruff check channelopt` must find nothing."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    proc = subprocess.run([ruff, "check", "channelopt", "--output-format", "concise"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_documentation_site_builds_with_warnings_as_errors(tmp_path):
    """mkdocs.yml: the user guide, the specification, the contract, reliability, references and
    the API reference generated from the docstrings (mkdocstrings, NumPy style)."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    api = (tmp_path / "site" / "api" / "solve" / "index.html").read_text()
    assert "channelopt.solve" in api and "time_limit" in api


def test_the_package_is_mypy_clean_under_the_project_config():
    """[tool.mypy] in pyproject.toml; `mypy` (packages = channelopt) must report no error."""
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_top_level_api_has_numpy_style_docstrings():
    """Every public name of `channelopt` (classes and functions) documents its parameters (or
    attributes) in NumPy style; the functions also say what they return and what they raise."""
    import inspect

    import channelopt as co

    for name in co.__all__:
        obj = getattr(co, name)
        if inspect.ismodule(obj) or (inspect.isclass(obj) and issubclass(obj, Exception)):
            continue
        doc = inspect.getdoc(obj) or ""
        assert "Parameters\n----------" in doc or "Attributes\n----------" in doc, name
        if inspect.isfunction(obj):
            assert "Returns\n-------" in doc and "Raises\n------" in doc, name


def test_every_object_of_the_api_reference_pages_has_numpy_sections():
    """The objects documented on docs/api/*.md (and, for a module, its public functions and
    classes) state Parameters or Attributes, and functions their Returns."""
    import importlib
    import inspect

    def resolve(name):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:]:
                obj = getattr(obj, p)
            return obj

    names = [n for page in (ROOT / "docs" / "api").glob("*.md") for n in re.findall(r"^::: (\S+)", page.read_text(), re.M)]
    assert len(names) >= 20
    for name in names:
        obj = resolve(name)
        members = [obj] if not inspect.ismodule(obj) else [
            v for k, v in vars(obj).items() if not k.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
            and v.__module__ == obj.__name__]
        for m in members:
            if inspect.isclass(m) and issubclass(m, Exception):
                continue
            doc = inspect.getdoc(m) or ""
            assert "Parameters\n----------" in doc or "Attributes\n----------" in doc, (name, m)
            if inspect.isfunction(m):
                assert "Returns\n-------" in doc, (name, m)
