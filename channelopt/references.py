"""The papers channelopt implements and judges, with the short names used everywhere.

Citations in docstrings, figures, `verify` reports and JSON read "<short name> <result>", e.g.
"LIP-TDSC Thm 3"; `REFERENCES[short]` gives the full entry (docs/references.md lists them).
"""

from __future__ import annotations

from typing import NamedTuple


class Reference(NamedTuple):
    """One paper.

    Attributes
    ----------
    short : str
        The short name used in citations (LIP-TDSC, CA-LIP, ID-LDP, ALIP, LIP-CNS, KSR).
    title, authors, venue : str
        As published.
    year : int
        Of publication.
    link : str
        arXiv id or DOI when known.
    """

    short: str
    title: str
    authors: str
    venue: str
    year: int
    link: str = ""
    """arXiv id or DOI when known."""

    def __str__(self) -> str:
        return f"{self.authors}, \"{self.title}\", {self.venue}, {self.year}" + (f", {self.link}" if self.link else "")


REFERENCES = {r.short: r for r in (
    Reference("LIP-TDSC", "Local Information Privacy and Its Application to Privacy-Preserving Data Aggregation",
              "B. Jiang, M. Li, R. Tandon", "IEEE Transactions on Dependable and Secure Computing 19(3), 1918-1935",
              2022, "arXiv:2001.02385"),
    Reference("CA-LIP", "Context-Aware Local Information Privacy", "B. Jiang, M. Seif, R. Tandon, M. Li",
              "IEEE Transactions on Information Forensics and Security 16", 2021),
    Reference("ID-LDP", "Providing Input-Discriminative Protection for Local Differential Privacy",
              "X. Gu, M. Li, L. Xiong, Y. Cao", "IEEE International Conference on Data Engineering (ICDE)", 2020),
    Reference("ALIP", "Asymmetric Local Information Privacy and the Watchdog Mechanism",
              "M. A. Zarrabian, N. Ding, P. Sadeghi", "IEEE Information Theory Workshop (ITW)", 2022,
              "arXiv:2205.14549"),
    Reference("LIP-CNS", "Context-aware Data Aggregation with Localized Information Privacy",
              "B. Jiang, M. Li, R. Tandon", "IEEE Conference on Communications and Network Security (CNS); "
              "extended version", 2018, "arXiv:1804.02149"),
    Reference("KSR", "Robust Privacy-Utility Tradeoffs Under Differential Privacy and Hamming Distortion",
              "K. Kalantari, L. Sankar, A. D. Sarwate", "IEEE Transactions on Information Forensics and Security "
              "13(11)", 2018),
)}
"""Short name -> full reference."""


def reference_for(citation: str) -> Reference | None:
    """The paper a citation ("LIP-TDSC Theorem 3") names, or None.

    Parameters
    ----------
    citation : str
        A citation such as "LIP-TDSC Theorem 3".

    Returns
    -------
    Reference or None
        The paper its short name denotes.
    """
    return REFERENCES.get(citation.split(" ", 1)[0])
