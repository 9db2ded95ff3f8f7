"""The one result type, and the cleaning + re-audit every returned channel goes through."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..io import jsonable

NEGATIVE_TOL = 1e-9
"""Entries in [-NEGATIVE_TOL, 0) are solver noise and set to 0; anything more negative is an error."""
ROW_TOL = 1e-8
"""Rows whose sums are off by at most this are renormalized; more is an error."""
NEGLIGIBLE_COLUMN = 1e-6
"""An output whose probability is below this from every input is merged into the most likely
output. Merging outputs is post-processing (LIP-TDSC Lemma 1): for the exact solution it cannot
increase any leakage, while an interior-point solver's ~1e-9 absolute noise on such a column
would otherwise show up as a large *relative* (log-ratio) error."""
ROUND_OFF = 4 * float(np.finfo(float).eps)
"""Per-symbol round-off allowance added to a posterior-LP gain bound (times d and the bound's
magnitude), so that the reported bound is valid as computed in floating point."""


def reported_bound(bound: float, d: int) -> float:
    """A posterior-space LP's gain bound as it is reported: plus the round-off allowance
    (ROUND_OFF per symbol, times the bound's magnitude). The loops that compute such bounds stop
    on the gap to this, so that the gap reported meets their target too."""
    return bound + ROUND_OFF * d * max(1.0, abs(bound))


def clean(q: np.ndarray, negligible: float = NEGLIGIBLE_COLUMN) -> tuple[np.ndarray | None, str]:
    """Remove solver noise. Returns (channel, "") or (None, reason) when the noise is too large.

    Cleaning only removes noise below the stated tolerances; the cleaned channel is audited
    again, so a real violation can never be hidden by it. Outputs whose entries are all below
    `negligible` are merged into the most used one (0: none is; a posterior-space optimum's
    outputs are exact, and one of probability 1e-7 is worth its share of the certified gap).
    """
    q = np.array(q, dtype=float)
    if not np.all(np.isfinite(q)):
        return None, "the solver returned non-finite entries"
    if q.min() < -NEGATIVE_TOL:
        x, y = np.unravel_index(np.argmin(q), q.shape)
        return None, f"entry q[{x}][{y}] = {q[x, y]:.3g} is negative beyond {NEGATIVE_TOL:g}"
    q = np.maximum(q, 0.0)
    tiny = q.max(axis=0) < negligible
    if tiny.any() and not tiny.all():
        target = int(np.argmax(np.where(tiny, -1.0, q.sum(axis=0))))
        q[:, target] += q[:, tiny].sum(axis=1)
        q[:, tiny] = 0.0
    sums = q.sum(axis=1)
    worst = int(np.argmax(np.abs(sums - 1)))
    if abs(sums[worst] - 1) > ROW_TOL:
        return None, f"row {worst} sums to {float(sums[worst])!r}, off by more than {ROW_TOL:g}"
    return q / sums[:, None], ""


def format_leakage(v) -> str:
    """A leakage for people: 6 significant digits; ALIP's pair as "lower x, upper y"."""
    if isinstance(v, dict):
        return ", ".join(f"{k} {format_leakage(x)}" for k, x in v.items())
    return f"{v:.6g}"


class PosteriorSolution(NamedTuple):
    """The posterior-space LP's answer (vertex enumeration, column generation or the orbit LP).

    V : (k, d) posteriors used; w : (k,) their weights (sum_j w_j V_j = prior);
    gain : the achieved gain sum_j w_j phi(V_j); bound : a certified upper bound on the gain
    (`Bayes.gain` units); info : how it was found (algorithm, rounds, columns, stop reason...).
    """

    V: np.ndarray
    w: np.ndarray
    gain: float
    bound: float
    info: dict


@dataclass
class Certificate:
    """How a result's optimality is known.

    The JSON form keeps the contract's keys: method, lower_bound or upper_bound, gap, note, then
    the details; `cert["gap"]` and `cert.get(key)` read that form.

    Attributes
    ----------
    method : str
        "closed-form-dual", "distortion-minimum", "posterior-dual", "lp-duality", "posterior-lp",
        "relaxation-bound", "convex-program", "farkas" or "structural".
    bound : float or None
        The certified bound on the objective (None when the method gives none).
    sense : {"min", "max"}
        "min": `bound` is a lower bound on the objective; "max": an upper bound.
    gap : float or None
        |objective - bound| for the returned channel.
    note : str
        What the certificate does not cover.
    details : dict
        Method-specific facts (algorithm, rounds, columns, pricing, stop reason, k...).
    """

    method: str
    bound: float | None = None
    sense: str = "min"
    gap: float | None = None
    note: str = ""
    details: dict = field(default_factory=dict)

    @property
    def side(self) -> str:
        """The JSON key of the bound: "lower_bound" or "upper_bound"."""
        return "lower_bound" if self.sense == "min" else "upper_bound"

    def to_json(self) -> dict:
        out: dict = {"method": self.method}
        if self.bound is not None:
            out[self.side] = self.bound
        if self.gap is not None:
            out["gap"] = self.gap
        if self.note:
            out["note"] = self.note
        return {**out, **self.details}

    def __getitem__(self, key):
        return self.to_json()[key]

    def __contains__(self, key):
        return key in self.to_json()

    def get(self, key, default=None):
        return self.to_json().get(key, default)


@dataclass(kw_only=True)
class Result:
    """What `solve` returns: the channel, how good it is, how that is known, and how it was found.

    Attributes
    ----------
    status : str
        "optimal" (solved, cleaned, the re-audit holds for every notion and the certificate closes
        the gap), "local" (feasible and audited, not proven optimal), "inaccurate" (the best
        channel found fails the re-audit or the cleaning), "infeasible" (no channel satisfies the
        notions together, with a proof) or "solver-failed".
    channel : ndarray of shape (d, k) or None
        q[x, j] = Pr(Y = outputs[j] | X=x): the problem's m outputs less those no input reaches,
        unless the problem fixed its outputs (`Problem.output_fixed`).
    outputs : tuple of int or None
        The output symbols the channel's columns stand for (None: all m, in order).
    output_size : int
        m, the problem's number of outputs (`full_channel` restores the dropped columns).
    objective : float or None
        The utility of the returned channel, recomputed from the channel.
    leakage, satisfied : dict
        Audited leakage per privacy table (keys as in docs/cli.md) and whether each holds.
    measures : Mapping
        Every budget-free leakage measure of the channel (computed when first read).
    certificate : Certificate or None
        How optimality is known (method, bound, gap), when it is.
    solver, method : str
        Who produced the channel ("HIGHS", "subset-rr", ...) and how ("closed-form", "top-outputs", "lp",
        "conic", "posterior-lp", "local").
    attempts : list of dict
        Every solver tried, in order, with its outcome.
    time_s : float
        Wall time of the solve; `timings` breaks it down.
    message : str
        Why the status is what it is, when it is not plainly optimal.
    """

    status: str
    channel: np.ndarray | None = None
    objective: float | None = None
    leakage: dict = field(default_factory=dict)
    satisfied: dict = field(default_factory=dict)
    measures: Mapping = field(default_factory=dict)
    certificate: Certificate | None = None
    solver: str = ""
    method: str = ""
    time_s: float = 0.0
    timings: dict = field(default_factory=dict)
    attempts: list = field(default_factory=list)
    message: str = ""
    outputs: tuple | None = None
    output_size: int = 0
    labels: tuple | None = field(default=None, repr=False, compare=False)
    """Input labels for display (not part of the JSON contract)."""
    kind: str = field(default="", repr=False, compare=False)
    """The utility's kind, for display."""

    SUMMARY_MAX = 12
    """Channels larger than this (either side) are summarized in `summary` unless `full`."""
    HTML_MAX = 64 * 64
    """The notebook view shows channels of at most this many entries as a whole table, larger ones
    summarized as `summary` does."""
    SUMMARY_ROWS = 40
    """A summarized channel shows the first SUMMARY_ROWS - 5 rows and the last 5 (d = 2000 had printed
    2,000 lines to the terminal, and a notebook had rendered all 4 million entries)."""

    def drop_unused(self) -> None:
        """Drop the channel's all-zero columns (outputs no input reaches), recording in `outputs`
        which symbols the remaining columns stand for. The conditional distributions, and so the
        leakage and the utility, are unchanged."""
        if self.channel is None:
            return
        self.output_size = self.output_size or self.channel.shape[1]
        used = self.channel.max(axis=0) > 0
        if used.all():
            return
        kept = np.flatnonzero(used) if self.outputs is None else np.asarray(self.outputs)[used]
        self.channel = np.ascontiguousarray(self.channel[:, used])
        self.outputs = tuple(int(y) for y in kept)

    @property
    def full_channel(self) -> np.ndarray | None:
        """The channel over all m outputs of the problem (dropped outputs as zero columns)."""
        if self.channel is None or self.outputs is None:
            return self.channel
        q = np.zeros((self.channel.shape[0], self.output_size))
        q[:, list(self.outputs)] = self.channel
        return q

    def _output_names(self) -> list[str]:
        ys = self.outputs if self.outputs is not None else range(0 if self.channel is None else self.channel.shape[1])
        return [f"y{y}" for y in ys]

    def _dropped_note(self) -> str:
        if self.outputs is None:
            return ""
        k = self.output_size - len(self.outputs)
        return (f"{k} of {self.output_size} outputs unused (no input reaches them) and dropped; columns are "
                + ", ".join(self._output_names()) + " (set output.size or output.fixed = true to keep them)")

    def _labels(self) -> list[str]:
        d = 0 if self.channel is None else self.channel.shape[0]
        return list(self.labels) if self.labels else [str(x) for x in range(d)]

    def summary(self, full: bool = False) -> str:
        """What `channelopt solve` prints: status, objective, channel, leakage, certificate, solver.
        A channel larger than SUMMARY_MAX x SUMMARY_MAX shows each row's three largest entries
        unless `full`."""
        out = [f"status:    {self.status}" + (f" ({self.message})" if self.message else "")]
        if self.channel is not None:
            out.append(f"objective: {self.objective:.10g}" + (f"  ({self.kind})" if self.kind else ""))
            q, labels = self.channel, self._labels()
            width = max(len(s) for s in labels)
            if self.outputs is not None:
                out.append(f"outputs:   {self._dropped_note()}")
            if full or max(q.shape) <= self.SUMMARY_MAX:
                out.append("channel q[x][y] = Pr(Y=y | X=x):")
                out += [f"  {lab:>{width}}  " + "  ".join(f"{v:.6f}" for v in row) for lab, row in zip(labels, q)]
            else:
                out.append(f"channel q[x][y] = Pr(Y=y | X=x): {q.shape[0]} x {q.shape[1]}, "
                           "each row's largest entries (full matrix: --full, --channel-out or the JSON):")
                names = self._output_names()
                for x in self._shown_rows():
                    if x < 0:
                        out.append(f"  {'':>{width}}  ... {-x} more rows ...")
                        continue
                    out.append(f"  {labels[x]:>{width}}  " + "  ".join(f"{names[y]}: {v:.6f}" for y, v in self._top(x)))
            for k, v in self.leakage.items():
                out.append(f"leakage {k}: {format_leakage(v)}  [{'ok' if self.satisfied.get(k) else 'VIOLATED'}]")
        c = self.certificate
        if c is not None:
            out.append(f"certificate: {c.method}, {c.side.replace('_', ' ')} {c.bound:.10g}, gap {c.gap:.3g}"
                       if c.bound is not None else f"certificate: {c.method}: {c.note}")
        out.append(f"solver:    {self.solver} via {self.method}, {self.time_s:.3f} s")
        return "\n".join(out)

    def _shown_rows(self) -> list[int]:
        """The rows a summarized channel shows, a negative -k where k rows are left out."""
        assert self.channel is not None
        d, n = self.channel.shape[0], self.SUMMARY_ROWS
        return list(range(d)) if d <= n else [*range(n - 5), -(d - n), *range(d - 5, d)]

    def _top(self, x: int) -> list[tuple[int, float]]:
        """Row x's three largest positive entries (output index, value)."""
        assert self.channel is not None
        row = self.channel[x]
        return [(int(y), float(row[y])) for y in np.argsort(-row, kind="stable")[:3] if row[y] > 0]

    def __str__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        """A notebook view: status, the channel as a labelled table, leakage, certificate, timings."""
        import html

        parts = [f"<p><b>status</b>: {html.escape(self.status)}"
                 + (f" — {html.escape(self.message)}" if self.message else "") + "</p>"]
        if self.channel is not None:
            parts.append(f"<p><b>objective</b>: {self.objective:.10g} {html.escape(self.kind)}</p>")
            if self.outputs is not None:
                parts.append(f"<p><b>outputs</b>: {html.escape(self._dropped_note())}</p>")
            names, labels = self._output_names(), self._labels()
            if self.channel.size <= self.HTML_MAX:
                head = "".join(f"<th>{y}</th>" for y in names)
                rows = "".join(f"<tr><th>{html.escape(lab)}</th>" + "".join(f"<td>{v:.6f}</td>" for v in row) + "</tr>"
                               for lab, row in zip(labels, self.channel))
                parts.append(f"<table><tr><th>x \\ y</th>{head}</tr>{rows}</table>")
            else:                                      # as `summary`: each row's largest entries
                rows = "".join(f"<tr><td colspan=2><i>{-x} more rows</i></td></tr>" if x < 0 else
                               f"<tr><th>{html.escape(labels[x])}</th><td>"
                               + ", ".join(f"{names[y]}: {v:.6f}" for y, v in self._top(x)) + "</td></tr>"
                               for x in self._shown_rows())
                parts.append(f"<p>channel {self.channel.shape[0]} x {self.channel.shape[1]}, each row's largest "
                             f"entries (the whole matrix: <code>.channel</code>, <code>.to_frame()</code>)</p>"
                             f"<table><tr><th>x</th><th>largest Pr(Y=y | X=x)</th></tr>{rows}</table>")
            parts.append("<ul>" + "".join(
                f"<li>leakage {html.escape(k)}: {html.escape(format_leakage(v))} "
                f"[{'ok' if self.satisfied.get(k) else '<b>VIOLATED</b>'}]</li>" for k, v in self.leakage.items()) + "</ul>")
        c = self.certificate
        if c is not None:
            parts.append(f"<p><b>certificate</b>: {html.escape(c.method)}"
                         + (f", {c.side.replace('_', ' ')} {c.bound:.10g}, gap {c.gap:.3g}" if c.bound is not None
                            else f": {html.escape(c.note)}") + "</p>")
        timing = ", ".join(f"{k} {v:.3f} s" for k, v in self.timings.items() if isinstance(v, float))
        parts.append(f"<p><b>solver</b>: {html.escape(self.solver)} via {html.escape(self.method)}; {timing}</p>")
        return "\n".join(parts)

    def to_frame(self):
        """The channel as a pandas DataFrame (rows: input labels, columns: the outputs y0, y1, ...); needs pandas
        (`pip install channelopt[pandas]`)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Result.to_frame needs pandas: pip install 'channelopt[pandas]'") from None
        if self.channel is None:
            raise ValueError(f"no channel to show (status {self.status})")
        return pd.DataFrame(self.channel, index=self._labels(), columns=self._output_names())

    def plot(self, ax=None):
        """A heat map of the channel with the input labels; returns the matplotlib Axes."""
        import matplotlib.pyplot as plt

        if self.channel is None:
            raise ValueError(f"no channel to plot (status {self.status})")
        if ax is None:
            _, ax = plt.subplots(figsize=(1 + 0.4 * self.channel.shape[1], 1 + 0.4 * self.channel.shape[0]))
        im = ax.imshow(self.channel, vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
        ax.set_yticks(range(self.channel.shape[0]), self._labels())
        if self.outputs is not None:
            ax.set_xticks(range(self.channel.shape[1]), self._output_names())
        ax.set_xlabel("output y")
        ax.set_ylabel("input x")
        ax.set_title(f"Pr(Y=y | X=x): {self.status}" + (f", {self.kind} {self.objective:.4g}" if self.kind else ""),
                     fontsize=9)
        ax.figure.colorbar(im, ax=ax)
        return ax

    @property
    def ok(self) -> bool:
        return self.status == "optimal"

    def to_json(self) -> dict:
        out = {
            "status": self.status,
            "objective": self.objective,
            "channel": None if self.channel is None else self.channel.tolist(),
            "leakage": self.leakage,
            "satisfied": self.satisfied,
        }
        if self.certificate is not None:
            out["certificate"] = self.certificate.to_json()
        out.update({"solver": self.solver, "method": self.method, "time_s": self.time_s,
                    "timings": self.timings, "attempts": self.attempts, "measures": self.measures})
        if self.outputs is not None:
            out["outputs"] = list(self.outputs)
            out["output_size"] = self.output_size
        if self.message:
            out["message"] = self.message
        return jsonable(out)
