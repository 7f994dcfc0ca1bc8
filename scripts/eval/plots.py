"""Plots for reports/: ROC curve, reliability diagram, score histograms per class.

  .venv/bin/python scripts/eval/plots.py reports/scores.json reports/
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def roc(labels, scores):
    order = np.argsort(-scores, kind="mergesort")
    y = labels[order]
    tps = np.concatenate([[0], np.cumsum(y)])
    fps = np.concatenate([[0], np.cumsum(1 - y)])
    return fps / max(1, fps[-1]), tps / max(1, tps[-1])


def main(path, out):
    data = json.load(open(path))
    labels = np.asarray(data["labels"], dtype=float)
    scores = np.asarray(data["scores"], dtype=float)

    fpr, tpr = roc(labels, scores)
    plt.figure(figsize=(4.5, 4.5))
    plt.plot(fpr, tpr, label="model")
    plt.plot([0, 1], [0, 1], "--", color="grey")
    plt.xlabel("false positive rate")
    plt.ylabel("true positive rate")
    plt.title("ROC, held-out test split")
    plt.tight_layout()
    plt.savefig(os.path.join(out, "roc.png"), dpi=110)
    plt.close()

    bins = [b for b in data["reliability"] if b["count"] > 0]
    plt.figure(figsize=(4.5, 4.5))
    plt.plot([0, 1], [0, 1], "--", color="grey", label="perfect")
    plt.plot([b["meanScore"] for b in bins], [b["fractionHarmful"] for b in bins], "o-", label="model")
    for b in bins:
        plt.annotate(str(b["count"]), (b["meanScore"], b["fractionHarmful"]), fontsize=7)
    plt.xlabel("mean predicted harmful_score")
    plt.ylabel("fraction harmful")
    plt.title("Reliability (10 bins, counts shown)")
    plt.legend()
    plt.tight_layout()
    plt.savefig(os.path.join(out, "reliability.png"), dpi=110)
    plt.close()

    real = np.zeros(len(scores), dtype=bool)
    real[np.asarray(data["real"], dtype=int)] = True
    plt.figure(figsize=(6, 4))
    edges = np.linspace(0, 1, 41)
    plt.hist(scores[labels == 1], bins=edges, alpha=0.6, label="harmful (synthetic)")
    plt.hist(scores[(labels == 0) & ~real], bins=edges, alpha=0.6, label="benign (synthetic)")
    plt.hist(scores[real], bins=edges, alpha=0.6, label="benign (real chats)")
    plt.yscale("log")
    plt.xlabel("harmful_score")
    plt.ylabel("conversations (log)")
    plt.legend()
    plt.tight_layout()
    plt.savefig(os.path.join(out, "score_hist.png"), dpi=110)
    plt.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
