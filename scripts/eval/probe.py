"""Character n-gram probe: what can a linear model learn from this corpus, in about a minute?

A logistic regression on character n-grams (2 to 5, within word boundaries), trained on the corpus's
train split only, then scored on its test split and on any other JSONL files of LabeledConversation
records. When it scores a slice as badly as the shipped network does, the corpus, not the network, is
the ceiling; so a data change can be tried here in minutes before an hour of training.

  .venv/bin/python scripts/eval/probe.py --corpus .tmp/data/corpus.jsonl \\
      [--slice NAME=PATH ...] [--by-tag flat,excerpt,short,long,register-shift] \\
      [--train-extra PATH ...] [--keep-speakers] [--top-features 30] [--json OUT] [--seed 0]

Text. A moderator's export is flat text, so by default every text, trained on or scored, is rendered
flat: a `name: ` speaker prefix at the start of a line is dropped (regex SPEAKER_PREFIX, line starts
only, so `meet me at 12:30` or `hi mom: home` keep their colons) and the lines are joined with a space.
The vectorizer lowercases. --keep-speakers reads the text as written instead.

Slices. `test` (the whole test split), `test_flat_under_1000` (every test record flattened, those
whose flat text is under 1,000 characters; flattened even with --keep-speakers), `tag:T` for each tag T
of --by-tag (test records carrying T), and one per --slice NAME=PATH. For each: n, positives, ROC-AUC
(scripts/train/metrics.py's, ties averaged as the eval's; null with one class), recall at 0.5, the share of negatives flagged at
0.5, the share of negatives flagged at the test cut (the cut that flags 10 % of the test split's
negatives, so slices of negatives only compare across probes), and ROC-AUC within the flat-length bands
under 1,000 characters and 1,000 or more (null unless the band holds both classes). A score flags when
it is strictly above the cut, as in scripts/eval/metrics.ts.

--train-extra PATH adds every record of PATH to training, whatever its split field says.
Output: a Markdown table on stdout; --json OUT writes the same figures (NaN written as null).
Deterministic: same inputs and seed, same figures (only the timings vary).
"""

import argparse
import json
import math
import os
import random
import re
import sys
import time

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from metrics import roc_auc  # noqa: E402  (the ROC-AUC training and the eval share, ties averaged)

SPEAKER_PREFIX = re.compile(r"^[^\s:]{1,40}:\s")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
FLAT_SHORT = 1000
TEST_CUT_SHARE = 0.10
VECTORIZER = dict(analyzer="char_wb", ngram_range=(2, 5), min_df=3, sublinear_tf=True, max_features=300_000, lowercase=True, dtype=np.float32)
CLASSIFIER = dict(C=4.0, max_iter=2000, class_weight="balanced", solver="liblinear")


# --- text -------------------------------------------------------------------------------------------


def flat_text(conversation):
    """The text with speaker prefixes dropped at line starts and its non-empty lines joined by a space."""
    lines = (SPEAKER_PREFIX.sub("", line, count=1).strip() for line in LINE_BREAK.split(conversation))
    return " ".join(line for line in lines if line)


def model_text(conversation, keep_speakers):
    """What the probe reads: flat text by default, the text as written with --keep-speakers."""
    return conversation if keep_speakers else flat_text(conversation)


# --- data -------------------------------------------------------------------------------------------


def read_jsonl(path):
    """Records of a JSONL file, checked for the fields the probe reads."""
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if not isinstance(r.get("conversation"), str) or r.get("label") not in (0, 1):
                raise SystemExit(f"{path}:{n}: a record needs a string conversation and a label of 0 or 1")
            records.append(r)
    return records


def parse_slice(spec):
    """`NAME=PATH` -> (name, path); the name is up to the first `=`."""
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise SystemExit(f"--slice wants NAME=PATH, got {spec!r}")
    return name, path


def has_tag(record, tag):
    return tag in (record.get("tags") or [])


# --- model ------------------------------------------------------------------------------------------


def train(texts, labels, seed):
    """Fit the vectorizer and the logistic regression; returns (vectorizer, classifier)."""
    vectorizer = TfidfVectorizer(**VECTORIZER)
    X = vectorizer.fit_transform(texts)
    classifier = LogisticRegression(random_state=seed, **CLASSIFIER).fit(X, np.asarray(labels))
    return vectorizer, classifier


def score(model, texts):
    """Probability of label 1 for each text."""
    vectorizer, classifier = model
    if not texts:
        return np.zeros(0)
    return classifier.predict_proba(vectorizer.transform(texts))[:, 1]


def top_features(model, k):
    """The k n-grams with the largest positive weights and the k with the largest negative weights."""
    vectorizer, classifier = model
    names = vectorizer.get_feature_names_out()
    w = classifier.coef_[0]
    order = np.argsort(w, kind="stable")
    pick = lambda idx: [[str(names[i]), round(float(w[i]), 4)] for i in idx]
    return {"positive": pick(order[::-1][:k]), "negative": pick(order[:k])}


# --- figures ----------------------------------------------------------------------------------------


def auc(labels, scores):
    """ROC-AUC with ties averaged, NaN when one class only."""
    return roc_auc(labels, scores)


def cut_flagging(negative_scores, share):
    """The lowest cut that flags (score > cut) no more than `share` of these negatives (metrics.ts cutAtFpr)."""
    s = np.sort(np.asarray(negative_scores))[::-1]
    if len(s) == 0:
        return math.nan
    return float(s[min(int(math.floor(len(s) * share)), len(s) - 1)])


def share_above(scores, cut):
    return float(np.mean(np.asarray(scores) > cut)) if len(scores) and not math.isnan(cut) else math.nan


def slice_row(name, labels, scores, flat_lengths, test_cut):
    """The figures of one slice."""
    labels, scores, flat_lengths = np.asarray(labels), np.asarray(scores), np.asarray(flat_lengths)
    pos, neg = scores[labels == 1], scores[labels == 0]
    short = flat_lengths < FLAT_SHORT
    return {
        "slice": name,
        "n": int(len(labels)),
        "positives": int(len(pos)),
        "roc_auc": auc(labels, scores),
        "recall_at_0_5": share_above(pos, 0.5),
        "negatives_flagged_at_0_5": share_above(neg, 0.5),
        "recall_at_test_cut": share_above(pos, test_cut),
        "negatives_flagged_at_test_cut": share_above(neg, test_cut),
        "roc_auc_flat_under_1000": auc(labels[short], scores[short]),
        "roc_auc_flat_1000_plus": auc(labels[~short], scores[~short]),
    }


# --- output -----------------------------------------------------------------------------------------

COLUMNS = [
    ("slice", "slice"),
    ("n", "n"),
    ("positives", "pos"),
    ("roc_auc", "ROC-AUC"),
    ("recall_at_0_5", "recall@0.5"),
    ("negatives_flagged_at_0_5", "neg flagged@0.5"),
    ("recall_at_test_cut", "recall@test cut"),
    ("negatives_flagged_at_test_cut", "neg flagged@test cut"),
    ("roc_auc_flat_under_1000", "AUC flat <1000"),
    ("roc_auc_flat_1000_plus", "AUC flat >=1000"),
]


def cell(v):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return "n/a" if math.isnan(v) else f"{v:.3f}"
    return str(v)


def markdown(report):
    """The report as Markdown: a header, the slice table, the top features if asked for."""
    t = report["train"]
    out = [
        f"# char n-gram probe: {report['corpus']}",
        "",
        f"train: {t['documents']} documents ({t['positives']} positive, {t['extra']} from --train-extra), "
        f"{report['features']} features, text {'as written' if report['options']['keep_speakers'] else 'flat'}; "
        f"test cut {cell(report['test_cut'])} flags {TEST_CUT_SHARE:.0%} of test negatives; "
        f"{report['seconds']['total']:.0f} s",
        "",
        "| " + " | ".join(h for _, h in COLUMNS) + " |",
        "|" + "|".join("---" if k == "slice" else "--:" for k, _ in COLUMNS) + "|",
    ]
    out += ["| " + " | ".join(cell(row[k]) for k, _ in COLUMNS) + " |" for row in report["slices"]]
    for side in ("positive", "negative"):
        if report.get("top_features"):
            out += ["", f"top {side} n-grams: " + ", ".join(f"{json.dumps(g)} {w:+.2f}" for g, w in report["top_features"][side])]
    return "\n".join(out)


def nulls(v):
    """NaN -> None, recursively, so the JSON has null where a figure is undefined."""
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, dict):
        return {k: nulls(x) for k, x in v.items()}
    if isinstance(v, list):
        return [nulls(x) for x in v]
    return v


def emit_slices(report, title, columns, json_path=None):
    """Prints a report's slice rows as a Markdown table under `title` (one column per row value) and,
    given a path, writes the report there as JSON with null where a figure is undefined."""
    print(title)
    print("| " + " | ".join(columns) + " |\n|" + "|".join("---" if i == 0 else "--:" for i in range(len(columns))) + "|")
    for r in report["slices"]:
        print("| " + " | ".join(cell(v) for v in r.values()) + " |")
    if json_path:
        with open(json_path, "w") as f:
            json.dump(nulls(report), f, indent=2)


# --- main -------------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, help="JSONL of LabeledConversation records; trains on split == 'train'")
    p.add_argument("--slice", action="append", default=[], metavar="NAME=PATH", help="a JSONL file to score (repeatable)")
    p.add_argument("--by-tag", default="", metavar="T1,T2", help="test-split slices of records carrying each tag")
    p.add_argument("--train-extra", action="append", default=[], metavar="PATH", help="JSONL added to training, split ignored (repeatable)")
    p.add_argument("--keep-speakers", action="store_true", help="read text as written, speaker prefixes and line breaks kept")
    p.add_argument("--top-features", type=int, default=0, metavar="K", help="print the K most positive and K most negative n-grams")
    p.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    p.add_argument("--train-sample", type=int, default=0, metavar="N", help="train on a seeded sample of N training records (0: all), as teacher_probe.py does")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def run(args):
    """Train, score every slice, return the report (a dict)."""
    started = time.perf_counter()
    named = [parse_slice(s) for s in args.slice]
    tags = [t for t in args.by_tag.split(",") if t]
    corpus = read_jsonl(args.corpus)
    extra = [r for path in args.train_extra for r in read_jsonl(path)]
    training = [r for r in corpus if r.get("split") == "train"] + extra
    if args.train_sample > 0:
        random.Random(args.seed).shuffle(training)
        training = training[: args.train_sample]
    test = [r for r in corpus if r.get("split") == "test"]
    if len({r["label"] for r in training}) < 2:
        raise SystemExit("the training records need both labels")

    model = train([model_text(r["conversation"], args.keep_speakers) for r in training], [r["label"] for r in training], args.seed)
    trained = time.perf_counter()

    test_flat = [flat_text(r["conversation"]) for r in test]
    test_lengths = [len(t) for t in test_flat]
    test_labels = [r["label"] for r in test]
    test_scores = score(model, [model_text(r["conversation"], args.keep_speakers) for r in test])
    flat_scores = score(model, test_flat) if args.keep_speakers else test_scores
    test_cut = cut_flagging(test_scores[np.asarray(test_labels) == 0], TEST_CUT_SHARE)

    def rows_of(name, idx, scores):
        return slice_row(name, [test_labels[i] for i in idx], scores[idx], [test_lengths[i] for i in idx], test_cut)

    every = np.arange(len(test))
    short = np.asarray([i for i in every if test_lengths[i] < FLAT_SHORT], dtype=int)
    rows = [rows_of("test", every, test_scores), rows_of(f"test_flat_under_{FLAT_SHORT}", short, flat_scores)]
    rows += [rows_of(f"tag:{t}", np.asarray([i for i, r in enumerate(test) if has_tag(r, t)], dtype=int), test_scores) for t in tags]
    for name, path in named:
        records = read_jsonl(path)
        scores = score(model, [model_text(r["conversation"], args.keep_speakers) for r in records])
        rows.append(slice_row(name, [r["label"] for r in records], scores, [len(flat_text(r["conversation"])) for r in records], test_cut))

    return {
        "corpus": args.corpus,
        "options": {
            "keep_speakers": args.keep_speakers,
            "seed": args.seed,
            "train_extra": args.train_extra,
            "by_tag": tags,
            "slices": [{"name": n, "path": p} for n, p in named],
            "vectorizer": {k: (str(np.dtype(v)) if k == "dtype" else v) for k, v in VECTORIZER.items()},
            "classifier": CLASSIFIER,
        },
        "train": {"documents": len(training), "positives": sum(r["label"] for r in training), "extra": len(extra)},
        "features": len(model[0].vocabulary_),
        "test_cut": test_cut,
        "test_cut_share": TEST_CUT_SHARE,
        "slices": rows,
        "top_features": top_features(model, args.top_features) if args.top_features > 0 else None,
        "seconds": {"train": round(trained - started, 1), "total": round(time.perf_counter() - started, 1)},
    }


def main(argv):
    args = parse_args(argv)
    report = nulls(run(args))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
            f.write("\n")
    print(markdown(report))


if __name__ == "__main__":
    main(sys.argv[1:])
