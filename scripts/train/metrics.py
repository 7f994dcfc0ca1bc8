"""ROC-AUC with tied scores given their average rank, the same figure as the eval's rocAuc
(scripts/eval/metrics.ts) and the probe's: test/model/metrics-parity.test.ts checks the three agree.
"""
import numpy as np


def roc_auc(labels, scores):
    """Mann-Whitney ROC-AUC, ties averaged; NaN when one class only."""
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    order = np.argsort(s, kind="stable")
    ranks = np.empty(len(s))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[order[j + 1]] == s[order[i]]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2 + 1
        i = j + 1
    pos = y == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
