"""The gate's paired test (pure): exact McNemar per row and rate, Holm across the family.

The gate compares the same cases on both sides, so each rate of each row is a 2x2 table of
paired verdicts; only the discordant cases (flipped one way or the other) carry information.
statsmodels computes both the exact test and the step-down adjustment; what is decided here
is which rates enter the family (`can_reject`: Tarone's refinement, docs/ARCHITECTURE.md).
"""

from __future__ import annotations

ALPHA = 0.05
"""The family-wise error rate the gate holds across every row and rate."""


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts."""
    if worse + better == 0:
        return 1.0
    from statsmodels.stats.contingency_tables import mcnemar

    return float(mcnemar([[0, worse], [better, 0]], exact=True).pvalue)


def can_reject(discordant: int, alpha: float = ALPHA) -> bool:
    """Whether an exact McNemar test on this many discordant cases can reach `alpha` at all
    (its smallest p-value, all flips one way, is 2 * 0.5 ** n)."""
    return discordant > 0 and min(1.0, 2 * 0.5**discordant) <= alpha


def holm(p_values: list[float], alpha: float = ALPHA) -> list[float]:
    """Holm-adjusted p-values (statsmodels' implementation)."""
    if not p_values:
        return []
    from statsmodels.stats.multitest import multipletests

    return [float(p) for p in multipletests(p_values, alpha=alpha, method="holm")[1]]
