"""Problem files (TOML, docs/cli.md) and channel CSV files."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import os
import re
import tempfile
import tomllib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from .errors import ProblemError, did_you_mean
from .notions import parse_notion
from .problem import Joint, Problem
from .utility import parse_utility

TOP_KEYS = {"name", "input", "latent", "output", "privacy", "utility", "solver", "expected"}
INPUT_KEYS = {"prior", "values", "labels", "normalize", "raw_prior", "query"}


def _table(doc: dict, key: str, allowed: set, required: bool = False) -> dict:
    t = doc.get(key)
    if t is None:
        if required:
            raise ProblemError(f"[{key}] table is required")
        return {}
    if not isinstance(t, dict):
        raise ProblemError(f"{key} must be a table, got {t!r}")
    unknown = sorted(set(t) - allowed)
    if unknown:
        raise ProblemError(f"{key}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)} "
                           f"(allowed: {', '.join(sorted(allowed))})")
    return t


def problem_from_dict(doc: dict) -> Problem:
    """A Problem from a parsed TOML document (docs/cli.md "Problem files").

    Parameters
    ----------
    doc : dict
        The document: `input`, optional `latent`, `output`, `privacy` (a list of tables),
        `utility`, `solver`.

    Returns
    -------
    Problem
        Validated; messages name the document's keys.

    Raises
    ------
    ProblemError
        If a key is unknown, missing or invalid (the message names it, its value and the rule).
    """
    from .problem import FROM_FILE

    token = FROM_FILE.set(True)
    try:
        return _problem_from_dict(doc)
    finally:
        FROM_FILE.reset(token)


def _problem_from_dict(doc: dict) -> Problem:
    unknown = sorted(set(doc) - TOP_KEYS)
    if unknown:
        raise ProblemError(f"unknown top-level key {unknown[0]!r}{did_you_mean(unknown[0], TOP_KEYS)} "
                           f"(allowed: {', '.join(sorted(TOP_KEYS))})")
    name = doc.get("name", "")
    if not isinstance(name, str):
        raise ProblemError(f"name must be a string, got {name!r}")
    inp = _table(doc, "input", INPUT_KEYS, required=True)
    normalize = inp.get("normalize", False)
    if not isinstance(normalize, bool):
        raise ProblemError(f"input.normalize must be true or false, got {normalize!r}")
    out = _table(doc, "output", {"size", "values", "fixed"})
    solver = _table(doc, "solver", {"name"}).get("name", "auto")
    privacy = doc.get("privacy", [])
    if isinstance(privacy, dict):
        privacy = [privacy]
    if not isinstance(privacy, list) or not privacy:
        raise ProblemError("[[privacy]]: at least one privacy table is required")
    notions = [parse_notion(t, f"privacy[{i}]") for i, t in enumerate(privacy)]
    utility = parse_utility(doc["utility"]) if "utility" in doc else None
    common = dict(privacy=notions, utility=utility, values=inp.get("values"), labels=inp.get("labels"),
                  output_size=out.get("size"), output_fixed=out.get("fixed"), output_values=out.get("values"),
                  name=name, solver=solver)
    if "raw_prior" in inp or "query" in inp:
        if "raw_prior" not in inp or "query" not in inp:
            raise ProblemError("input.raw_prior and input.query must be given together")
        if "prior" in inp or "latent" in doc:
            raise ProblemError("input.raw_prior/query defines the secret and the prior: drop input.prior and [latent]")
        return Problem.from_query(inp["raw_prior"], inp["query"], normalize=normalize, **common)
    latent = doc.get("latent")
    if latent is not None:
        _table(doc, "latent", {"prior", "conditional"})
    if "prior" not in inp:
        if latent is None:
            raise ProblemError("input.prior is required")
        joint = Joint.parse("latent", latent, None)
        prior = joint.prior_x
    else:
        prior = inp["prior"]
    return Problem(prior=prior, latent=latent, normalize=normalize, **common)


MAX_NESTING = 64
"""Deepest nesting of arrays and inline tables a problem file may use (a d x d matrix needs 2)."""


def parse_toml(text: str) -> dict:
    depth = nesting(text)
    if depth > MAX_NESTING:
        raise ProblemError(f"malformed TOML: arrays or inline tables nested {depth} deep; at most {MAX_NESTING}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProblemError(f"malformed TOML: {e}") from None


def nesting(text: str) -> int:
    """The deepest nesting of [ ] and { } in TOML text, outside strings and comments."""
    depth = top = 0
    quote = None
    comment = False
    for ch in text:
        if comment:
            comment = ch != "\n"
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            comment = True
        elif ch in "[{":
            depth += 1
            top = max(top, depth)
        elif ch in "]}":
            depth = max(depth - 1, 0)
    return top


def read_text(path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProblemError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise ProblemError(f"not a file: {path}") from None
    except UnicodeDecodeError:
        raise ProblemError(f"{path} is not UTF-8 text") from None
    except OSError as e:
        raise ProblemError(f"cannot read {path}: {e.strerror}") from None


def load_document(path) -> dict:
    return parse_toml(read_text(path))


def load_problem(path) -> Problem:
    """A Problem from a TOML problem file (docs/cli.md "Problem files").

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    Problem
        Validated; messages name the file's keys (`input.prior`, `privacy[0].epsilon`, ...).

    Raises
    ------
    ProblemError
        If the file cannot be read, is not valid TOML, or describes an invalid problem.
    """
    return problem_from_dict(load_document(path))


def read_channel(path) -> np.ndarray:
    """A channel from CSV: one row per input, one column per output (no header; '#' comments)."""
    text = read_text(path)
    rows = []
    for i, row in enumerate(csv.reader(io.StringIO(text))):
        if not row or row[0].lstrip().startswith("#"):
            continue
        try:
            rows.append([float(v) for v in row])
        except ValueError:
            raise ProblemError(f"{path} line {i + 1}: every entry must be a number, got {row!r}") from None
    if not rows:
        raise ProblemError(f"{path}: no channel rows")
    if len({len(r) for r in rows}) != 1:
        raise ProblemError(f"{path}: every row must have the same number of columns")
    return np.array(rows)


def temp_prefix(path: Path) -> str:
    """Prefix of this process's temporary files beside `path`: `.{name}.{pid}.`. Files of the
    same output left by a process that no longer runs (killed) are removed first."""
    remove_stale(path)
    return f".{path.name}.{os.getpid()}."


def remove_stale(path: Path) -> None:
    """Remove `.{name}.{pid}.*` files and folders beside `path` whose process is gone."""
    import shutil

    folder = path.parent if str(path.parent) else Path(".")
    try:
        entries = list(folder.glob(f".{glob_escape(path.name)}.*"))
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(path.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    entry.unlink()


def glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_atomic(path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename: never a partial file.

    The file gets the user's umask (like any file the user creates), not mkstemp's 0600.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def check_writable(path, key: str, directory: bool = False) -> Path:
    """Fail before any work if `path` (a file in an existing directory, or a directory to create)
    cannot be written."""
    path = Path(path)
    target = path if directory else path.parent if str(path.parent) else Path(".")
    probe = target
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if (directory and path.exists() and not path.is_dir()) or (not directory and path.is_dir()):
        raise ProblemError(f"{key} {str(path)!r} must be a {'directory' if directory else 'file path'}")
    if not directory and not target.is_dir():      # (a folder to write into is created; a file's is not)
        raise ProblemError(f"{key} {str(path)!r}: no directory {str(target)!r} to write it in")
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ProblemError(f"{key} {str(path)!r} is not writable (no write access to {str(probe)!r})")
    if not directory and path.exists() and not os.access(path, os.W_OK):
        raise ProblemError(f"{key} {str(path)!r} is not writable")
    return path


def jsonable(v):
    """v with NumPy scalars and arrays as plain Python values, +-inf as "Infinity" / "-Infinity"
    and NaN as null (the JSON contract, docs/cli.md)."""
    if isinstance(v, Mapping):
        return {k: jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        if v and set(map(type, v)) == {float} and all(map(math.isfinite, v)):
            return list(v)                    # (a channel's row: JSON as it is, checked at C speed)
        return [jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else ("Infinity" if v > 0 else "-Infinity") if not math.isnan(v) else None
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.bool_):
        return bool(v)
    return v


def dumps(doc) -> str:
    """The JSON text of doc (`jsonable` values), indented by 2 as the CLI prints it, with each list of
    plain numbers (a channel's row, a prior) on one line: the same JSON, a line per row instead of
    one per number (d = 2000: 2,000 lines for the channel, not 4 million), written by json's C
    encoder (the indented one is Python's own: `channelopt solve --out` with `--time-limit 3` took
    10.2 s there, 7.2 s with this)."""
    leaves: list[str] = []

    def mark(v):
        if isinstance(v, dict):
            return {mark(k): mark(x) for k, x in v.items()}
        if isinstance(v, list):
            if v and set(map(type, v)) <= {float, int}:
                leaves.append(json.dumps(v))
                return f"\0{len(leaves) - 1}\0"
            return [mark(x) for x in v]
        if isinstance(v, str) and "\0" in v:
            raise ValueError                  # (a string that could be taken for a placeholder)
        return v
    try:
        marked = mark(doc)
    except ValueError:
        return json.dumps(doc, indent=2)
    return re.sub(r'"\\u0000(\d+)\\u0000"', lambda m: leaves[int(m.group(1))], json.dumps(marked, indent=2))


def toml_value(value, key: str) -> str:
    """One TOML value (numbers, booleans, strings, arrays, inline tables) for the problem-file writer."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return "nan" if v != v else ("inf" if v == np.inf else "-inf" if v == -np.inf else repr(v))
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, key) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v, f'{key}.{k}')}" for k, v in value.items()) + "}"
    raise ProblemError(f"{key}: {type(value).__name__} values cannot be written to a problem file")


def problem_to_toml(problem: Problem) -> str:
    """The problem as a problem file (docs/cli.md) that `load_problem` reads back to the same problem.

    Parameters
    ----------
    problem : Problem
        Any problem whose notions and utility have a table form (a custom `combine` callable of
        id-ldp has none).

    Returns
    -------
    str
        TOML text: `name`, `[input]`, `[latent]`, `[output]`, `[[privacy]]` tables, `[utility]`.

    Raises
    ------
    ProblemError
        If a notion or the utility cannot be written (e.g. a custom combine function).
    """
    lines = [f"name = {toml_value(problem.name, 'name')}"] if problem.name else []
    lines += ["", "[input]", f"prior = {toml_value(problem.prior, 'input.prior')}",
              f"values = {toml_value(problem.values, 'input.values')}"]
    if problem.labels is not None:
        lines.append(f"labels = {toml_value(list(problem.labels), 'input.labels')}")
    if problem.latent is not None:
        lines += ["", "[latent]", f"prior = {toml_value(problem.latent.prior, 'latent.prior')}",
                  f"conditional = {toml_value(problem.latent.conditional, 'latent.conditional')}"]
    if problem.m != problem.d or problem.output_values is not None or problem.output_fixed:
        lines += ["", "[output]", f"size = {problem.m}"] + ([] if problem.output_fixed else ["fixed = false"])
        if problem.output_values is not None:
            lines.append(f"values = {toml_value(problem.output_values, 'output.values')}")
    for i, notion in enumerate(problem.privacy):
        table = notion.to_table()
        if table.get("combine") == "custom":
            raise ProblemError(f"privacy[{i}]: a custom combine function cannot be written to a problem file")
        lines += ["", "[[privacy]]"] + [f"{k} = {toml_value(v, f'privacy[{i}].{k}')}" for k, v in table.items()]
    if problem.utility is not None:
        lines += ["", "[utility]"] + [f"{k} = {toml_value(v, f'utility.{k}')}" for k, v in problem.utility.to_table().items()]
    if problem.solver != "auto":
        lines += ["", "[solver]", f"name = {toml_value(problem.solver, 'solver.name')}"]
    return "\n".join(lines) + "\n"
