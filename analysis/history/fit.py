"""Risk weights fitted on a branch's own past: which of the risk score's terms predicted a later revert or
fix there (issue 16). Pure: a matrix of terms and labels in, weights out.

An L2-penalised logistic regression on the standardised terms, solved by a few Newton (IRLS) steps: five
terms need no more. The weights are clipped at zero so that a term never lowers the score (the reason
line names the terms that raised it). Too few positives in the window, or a fit that does not converge
or leaves every weight at zero, gives the fixed weights back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Followed-up commits the window needs before its own weights are fitted: below that, one or two
# commits would set a weight.
MIN_POSITIVES = 20
PENALTY = 1.0  # L2 penalty on the standardised weights (the intercept is not penalised)
STEPS = 25
TOLERANCE = 1e-6
HALVINGS = 30


@dataclass(frozen=True, slots=True)
class RiskWeights:
    """The weights of the risk score's five terms (see `index.risk_terms`)."""

    lines: float
    files: float
    path_lift: float
    churn: float
    follow_up: float
    fitted: bool = False  # False: the fixed, documented weights

    def as_array(self) -> np.ndarray:
        return np.array([self.lines, self.files, self.path_lift, self.churn, self.follow_up])

    @property
    def name(self) -> str:
        return "fitted" if self.fitted else "fixed"


def fit_weights(terms: np.ndarray, followed: np.ndarray, fixed: RiskWeights) -> RiskWeights:
    """Weights for the columns of `terms` (one row per past commit) from `followed` (True: later reverted
    or fixed, as known before the cutoff); `fixed` when the window cannot support a fit."""
    y = np.asarray(followed, dtype=float)
    x = np.asarray(terms, dtype=float)
    if x.ndim != 2 or x.shape[0] != y.shape[0] or y.sum() < MIN_POSITIVES or y.sum() == y.shape[0]:
        return fixed
    mean, scale = x.mean(axis=0), x.std(axis=0)
    varies = scale > 0
    z = np.zeros_like(x)
    z[:, varies] = (x[:, varies] - mean[varies]) / scale[varies]
    import os  # EXPERIMENT

    prior = np.zeros(x.shape[1] + 1)
    if os.environ.get("FR_PRIOR") == "1":
        prior[1:][varies] = fixed.as_array()[varies] * scale[varies]
    beta = _logistic(z, y, prior)
    if beta is None:
        return fixed
    weights = np.zeros(x.shape[1])
    weights[varies] = beta[1:][varies] / scale[varies]  # back to the raw terms' units
    weights = np.clip(weights, 0.0, None)
    if not np.all(np.isfinite(weights)) or not weights.any():
        return fixed
    return RiskWeights(*(float(w) for w in weights), fitted=True)


def _logistic(z: np.ndarray, y: np.ndarray, prior: np.ndarray) -> np.ndarray | None:
    """Intercept and coefficients of the penalised logistic regression; None when it did not converge.
    Newton steps are halved until the penalised likelihood rises: a rare binary term (being a follow-up)
    standardises to large values, and full steps then overshoot back and forth."""
    n, k = z.shape
    design = np.hstack([np.ones((n, 1)), z])
    import os

    penalty = np.full(k + 1, float(os.environ.get("FR_PEN", PENALTY)))
    penalty[0] = 0.0
    beta = np.zeros(k + 1)
    beta[0] = np.log(y.mean() / (1 - y.mean()))
    beta[1:] = prior[1:]
    current = _objective(design, y, beta, penalty, prior)
    for _ in range(STEPS):
        eta = design @ beta
        p = _sigmoid(eta)
        gradient = design.T @ (y - p) - penalty * (beta - prior)
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty)
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            return None
        for _ in range(HALVINGS):
            value = _objective(design, y, beta + step, penalty, prior)
            if value >= current:
                break
            step = step / 2
        else:
            return None
        beta, current = beta + step, value
        if np.max(np.abs(step)) < TOLERANCE:
            return beta
    return None


def _objective(
    design: np.ndarray, y: np.ndarray, beta: np.ndarray, penalty: np.ndarray, prior: np.ndarray
) -> float:
    """Penalised log-likelihood."""
    eta = design @ beta
    return float(np.sum(y * eta - np.logaddexp(0.0, eta)) - 0.5 * np.sum(penalty * (beta - prior) ** 2))


def _sigmoid(eta: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -eta))
