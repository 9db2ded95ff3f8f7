"""Priors and correlations estimated from the shipped real data (docs/spec.md §7).

adult.csv: UCI Adult census extract (1994 census; UCI Machine Learning Repository), 30,162 rows.
"""

from __future__ import annotations

import csv
import gzip
import os
from importlib import resources
from pathlib import Path

import numpy as np

from .errors import ProblemError
from .problem import Joint

WORKCLASS_GROUPS = {
    "Private": "Private",
    "Self-emp-not-inc": "Self-employed",
    "Self-emp-inc": "Self-employed",
    "Federal-gov": "Government",
    "Local-gov": "Government",
    "State-gov": "Government",
    "Without-pay": "Without-pay",
    "Never-worked": "Without-pay",
}
WORKCLASS_LABELS = ["Private", "Self-employed", "Government", "Without-pay"]
INCOME_LABELS = ["<=50K", ">50K"]


def open_text(path):
    """A data file for reading as text; `.gz` files are decompressed on the fly."""
    path = Path(path)
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, newline="", encoding="utf-8")


def adult_rows(path) -> list[dict]:
    try:
        with open_text(path) as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise ProblemError(f"cannot read {path}: {e.strerror}") from None


def adult_workclass_income(path, rows: list[dict] | None = None) -> Joint:
    """Secret G = income (<=50K, >50K), data X = work class in 4 groups (LIP-TDSC §5.2.2).

    Returns the empirical joint: Pr(G) and Pr(X | G) as relative frequencies.
    """
    rows = adult_rows(path) if rows is None else rows
    counts = np.zeros((len(INCOME_LABELS), len(WORKCLASS_LABELS)))
    for r in rows:
        g = INCOME_LABELS.index(r["income"].strip())
        x = WORKCLASS_LABELS.index(WORKCLASS_GROUPS[r["type_employer"].strip()])
        counts[g, x] += 1
    return Joint(counts.sum(axis=1) / counts.sum(), counts / counts.sum(axis=1, keepdims=True))


DATA_ENV = "CHANNELOPT_DATA"
"""A folder holding adult.csv and retail_head.dat to use instead of the shipped copies."""


DATA_FILES = ("adult.csv", "retail_head.dat")


def check_data_dir(folder, key: str) -> Path:
    """`folder` as a readable directory holding at least one of DATA_FILES, else ProblemError
    naming `key`, the path and what was expected."""
    path = Path(folder)
    if not path.is_dir():
        raise ProblemError(f"{key} {str(path)!r}: not a directory (expected a folder holding {' and/or '.join(DATA_FILES)})")
    if not any((path / n).is_file() for n in DATA_FILES):
        raise ProblemError(f"{key} {str(path)!r}: holds neither {' nor '.join(DATA_FILES)}")
    return path.resolve()


def data_file(name: str) -> Path:
    """The real-data file `name` (adult.csv, retail_head.dat): from the folder in the environment
    variable CHANNELOPT_DATA when it is set, else the copy shipped inside the package
    (channelopt/datasets/<name>.gz, byte-identical to the source files, see its README)."""
    folder = os.environ.get(DATA_ENV)
    if folder:
        path = Path(folder) / name
        if not path.is_file():
            raise ProblemError(f"{DATA_ENV}={folder!r}: expected the file {name} in that folder")
        return path
    return Path(str(resources.files("channelopt").joinpath("datasets", name + ".gz")))


def retail_sets(path) -> tuple[list[np.ndarray], np.ndarray]:
    """Item sets of `retail_head.dat` (FIMI Retail, first 21,891 transactions; ID-LDP §VII).

    Returns (sets, ids): each set as sorted indices into `ids`, the distinct item ids in increasing
    order. Blank lines (transactions without items) are skipped: PS needs at least one item."""
    try:
        with open_text(path) as f:
            lines = [ln.split() for ln in f]
    except OSError as e:
        raise ProblemError(f"cannot read {path}: {e.strerror}") from None
    try:
        raw = [np.unique(np.array(ln, dtype=np.int64)) for ln in lines if ln]
    except ValueError:
        raise ProblemError(f"{path}: item ids must be integers") from None
    ids = np.unique(np.concatenate(raw))
    return [np.searchsorted(ids, s) for s in raw], ids
