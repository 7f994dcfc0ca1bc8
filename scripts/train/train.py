"""Trains the conversation-risk model on exported segments, calibrates it and exports ONNX.

  .venv/bin/python scripts/train/train.py --segments segs.jsonl --tokenizer tokenizer.json --out DIR [--epochs 7]

Reads the segment JSONL written by scripts/data/export.ts (the server's own encoder), trains at
conversation level (max over segment logits, harm-weighted speaker mixture: the aggregation of
docs/model-contract.md), fits temperature + bias on the validation conversations after that same
aggregation, and writes DIR/model.onnx and DIR/training.json.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import ConversationRisk  # noqa: E402
from onnx_export import export_contract_onnx  # noqa: E402

SPEAKERS = {"user1": 0, "user2": 1, "neither": 2}


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def load_conversations(path):
    convs = {}
    order = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            c = convs.get(r["conv"])
            if c is None:
                c = convs[r["conv"]] = {
                    "id": r["conv"], "split": r["split"], "label": r["label"],
                    "speaker": SPEAKERS[r["predator"]], "ages": r["age_features"], "segments": [],
                    "flat": True, "onset": r.get("onset_piece", -1),
                }
                order.append(r["conv"])
            c["segments"].append((r["input_ids"], r["speaker_ids"]))
            # Flat text (speaker id 3 only) names nobody in service, so it teaches harm, not sides.
            c["flat"] = c["flat"] and all(s == 3 for s in r["speaker_ids"])
    return [convs[k] for k in order]


def collate(convs, max_tokens=None):
    """Pads the batch's segments to the longest segment and the longest piece (as the server does)."""
    segs = [(s, c["ages"]) for c in convs for s in c["segments"]]
    T = max(len(s[0][1]) for s in segs)
    L = max(len(ids) for s in segs for ids in s[0][0])
    if max_tokens:
        L = min(L, max_tokens)
    ids = np.zeros((len(segs), T, L), dtype=np.int64)
    spk = np.zeros((len(segs), T), dtype=np.int64)
    ages = np.zeros((len(segs), 8), dtype=np.float32)
    owner = []
    for i, ((inp, sp), a) in enumerate(segs):
        for t, piece in enumerate(inp):
            ids[i, t, : len(piece)] = piece[:L]
        spk[i, : len(sp)] = sp
        ages[i] = a
    for ci, c in enumerate(convs):
        owner += [ci] * len(c["segments"])
    return torch.from_numpy(ids), torch.from_numpy(spk), torch.from_numpy(ages), torch.tensor(owner)


def augment(ids, spk, ages, owner, target, token_dropout):
    """Token dropout (against memorising exact phrasings) and speaker mirroring: swapping user1 and
    user2 (ids, age halves and the predator label) in half the conversations teaches attribution
    that depends on what each side says, not on who spoke first."""
    if token_dropout > 0:
        ids = ids * (torch.rand(ids.shape) >= token_dropout).to(ids.dtype)
    flip = torch.rand(target.shape[0]) < 0.5
    seg_flip = flip[owner]
    swapped = torch.where(spk == 1, torch.full_like(spk, 2), torch.where(spk == 2, torch.full_like(spk, 1), spk))
    spk = torch.where(seg_flip.unsqueeze(-1), swapped, spk)
    ages = torch.where(seg_flip.unsqueeze(-1), torch.cat([ages[:, 4:], ages[:, :4]], -1), ages)
    target = torch.where(flip & (target < 2), 1 - target, target)
    return ids, spk, ages, target


def aggregate(harm_logit, speaker_logits, owner, n):
    """Contract aggregation: max harm logit per conversation; harm-weighted mean of speaker softmax."""
    conv_logit = torch.full((n,), -1e9).scatter_reduce(0, owner, harm_logit, reduce="amax", include_self=True)
    w = torch.sigmoid(harm_logit) + 1e-6
    s = torch.softmax(speaker_logits, -1)
    num = torch.zeros(n, 3).index_add(0, owner, s * w.unsqueeze(-1))
    den = torch.zeros(n).index_add(0, owner, w)
    return conv_logit, num / den.unsqueeze(-1)


MAX_TURNS = 64  # segment.max_turns of the exported segments (scripts/data/export.ts DEFAULT_SEGMENT)
# segment.max_tokens_per_flat_piece (--flat-piece-tokens): pieces of unknown-speaker turns. It divides
# max_tokens_per_turn (export.ts checks), so cutting each piece of a turn at it cuts the turn as the
# server does. 32 would cut flat text like any turn (contract 3, model 3.2.0).
MAX_TOKENS_PER_FLAT_PIECE = 8
MAX_TOKENS_PER_TURN = 32  # segment.max_tokens_per_turn (export.ts DEFAULT_SEGMENT): pieces of a turn with a speaker


VIEW_CHUNK_TOKENS = (3, 4, 5, 6, 8)


def merged_runs(pieces, onset, turn_tokens, flat_tokens):
    """Each speaker's consecutive pieces joined into one turn and cut again as the server cuts a turn
    (`flat_tokens` for unknown-speaker pieces), with where the onset piece's first token landed: what
    the server makes of a chat whose client joined each burst into one message (recut.ts
    mergeSpeakerRuns). A turn's pieces were cut from its start, so a lone turn comes out unchanged."""
    out = []
    view_onset = -1
    k = 0
    while k < len(pieces):
        sp = pieces[k][1]
        size = flat_tokens if sp == 3 else turn_tokens
        stream = []
        while k < len(pieces) and pieces[k][1] == sp:
            if k == onset:
                view_onset = len(out) + len(stream) // size
            stream += pieces[k][0]
            k += 1
        out += [(stream[i: i + size], sp) for i in range(0, len(stream), size)]
    return out, view_onset


def rendered_view(conv, rng, one_line_rate=0.0, max_turns=MAX_TURNS, flat_tokens=MAX_TOKENS_PER_FLAT_PIECE,
                  merge_rate=0.0, turn_tokens=MAX_TOKENS_PER_TURN):
    """The same conversation as a moderator's export might render it, built from its pieces and
    segmented in fixed segments of `max_turns` pieces, as the encoder does. Half the views are flat
    (every speaker unknown, id 3), the rest re-cut into short lines of 3 to 8 tokens each (drawn per
    view: a fixed 5 left the evaluation's 4-word cut moving 11 % of chats), keeping the speaker.

    A flat view is flat text that kept its line breaks: each original piece becomes unknown-speaker
    pieces of at most `flat_tokens`, as the server cuts an unknown-speaker turn. At `one_line_rate` it
    is instead what the server makes of a flat export on one line: a single turn, so all tokens in one
    stream cut into pieces of `flat_tokens` that straddle the messages. The shipped model trains with
    rate 0; runs 15 and 16 (docs/training.md, "Tried and not kept") found one-line views for sparse
    moves in one-line flat text at a cost elsewhere.

    At `merge_rate`, a view that keeps its speakers joins each speaker's runs instead of cutting short
    lines (merged_runs): a few predatory lines folded into long turns of everyday talk, the weakest
    rendering of the sparse slice (scripts/eval/sparse-grooming.ts). The shipped model trains with 0.

    The harmful chat's onset moves with its tokens: to the piece holding the onset piece's first token."""
    pieces = [(ids, sp) for inp, spk in conv["segments"] for ids, sp in zip(inp, spk)]
    onset = conv["onset"]
    flat = rng.random() < 0.5
    chunk_tokens = rng.choice(VIEW_CHUNK_TOKENS)
    out = []
    view_onset = -1
    # No draw at rate 0, so a run without one-line views reproduces the models trained before them.
    if flat and one_line_rate > 0 and rng.random() < one_line_rate:
        stream = []
        for i, (ids, _) in enumerate(pieces):
            if i == onset:
                view_onset = len(stream) // flat_tokens
            stream += ids
        out = [(stream[k: k + flat_tokens], 3) for k in range(0, len(stream), flat_tokens)]
    # A chat that is flat already would merge into one line: left to the one-line views, which runs 15
    # and 16 did not keep.
    elif not flat and not conv["flat"] and merge_rate > 0 and rng.random() < merge_rate:
        out, view_onset = merged_runs(pieces, onset, turn_tokens, flat_tokens)
    else:
        for i, (ids, sp) in enumerate(pieces):
            if i == onset:
                view_onset = len(out)
            if flat:
                out += [(ids[k: k + flat_tokens], 3) for k in range(0, len(ids), flat_tokens)]
            else:
                out += [(ids[k: k + chunk_tokens], sp) for k in range(0, len(ids), chunk_tokens)]
    segments = [([p[0] for p in out[k: k + max_turns]], [p[1] for p in out[k: k + max_turns]]) for k in range(0, len(out), max_turns)]
    return {**conv, "segments": segments, "flat": conv["flat"] or flat, "onset": view_onset}


def masked_bce(turn_logits, target, mask):
    """Mean binary cross-entropy of the running harm over the pieces `mask` selects (0 when none is)."""
    if mask.sum() == 0:
        return turn_logits.sum() * 0.0
    per_turn = F.binary_cross_entropy_with_logits(turn_logits, target, reduction="none")
    return (per_turn * mask).sum() / mask.sum()


def benign_prefix_loss(turn_logits, spk, seg_label):
    """Every prefix of a benign conversation is benign, so its running harm after each turn is taught
    to stay low (the explained running score, and alerts on benign chats, read those outputs). A
    harmful chat's prefixes are onset_loss's, where its onset is known."""
    mask = ((spk != 0) & (seg_label < 0.5).unsqueeze(-1)).to(torch.float32)
    return masked_bce(turn_logits, torch.zeros_like(turn_logits), mask)


def onset_targets(convs, max_turns):
    """Running-harm targets where a harmful chat's onset is known (export.ts `onset_piece`): every piece
    before the onset is a benign prefix (0), and in the onset's segment every piece from it on holds a
    predatory move (1), as an excerpt does. Later segments restart their state without the onset, so
    they get no target. Returns (target, mask), each [segments, max_turns], in collate's row order."""
    rows = sum(len(c["segments"]) for c in convs)
    target = np.zeros((rows, max_turns), dtype=np.float32)
    mask = np.zeros((rows, max_turns), dtype=np.float32)
    r = 0
    for c in convs:
        o = c["onset"] if c["label"] == 1 else -1
        start = 0
        for _, sp in c["segments"]:
            n = len(sp)
            if o >= start + n:
                mask[r, :n] = 1
            elif o >= start:
                mask[r, :n] = 1
                target[r, o - start: n] = 1
            r += 1
            start += n
    return torch.from_numpy(target), torch.from_numpy(mask)


def onset_loss(turn_logits, convs):
    target, mask = onset_targets(convs, turn_logits.shape[1])
    return masked_bce(turn_logits, target, mask)


def add_running_losses(loss, turn_logits, spk, seg_label, convs, args):
    """`loss` plus the weighted running-harm losses of one batch (benign prefixes stay low, harm rises
    at a known onset), each left out at weight 0."""
    if args.prefix_weight > 0:
        loss = loss + args.prefix_weight * benign_prefix_loss(turn_logits, spk, seg_label)
    if args.onset_weight > 0:
        loss = loss + args.onset_weight * onset_loss(turn_logits, convs)
    return loss


def batches(convs, size, shuffle, rng):
    # Bucket by length so padding stays small; shuffle bucket order each epoch.
    idx = sorted(range(len(convs)), key=lambda i: sum(len(s[1]) for s in convs[i]["segments"]))
    chunks = [idx[i: i + size] for i in range(0, len(idx), size)]
    if shuffle:
        rng.shuffle(chunks)
    for ch in chunks:
        yield [convs[i] for i in ch]


def predict(model, convs, size=128):
    model.eval()
    logits, probs = [], []
    with torch.no_grad():
        for i in range(0, len(convs), size):
            b = convs[i: i + size]
            ids, spk, ages, owner = collate(b)
            h, s, _ = model(ids, spk, ages)
            cl, sp = aggregate(h, s, owner, len(b))
            logits.append(cl)
            probs.append(sp)
    return torch.cat(logits), torch.cat(probs)


def sorted_view(convs):
    return sorted(convs, key=lambda c: sum(len(s[1]) for s in c["segments"]))


def auc(y, s):
    y = np.asarray(y)
    s = np.asarray(s)
    order = np.argsort(s)
    ranks = np.empty(len(s))
    ranks[order] = np.arange(1, len(s) + 1)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def fit_temperature(logits, labels):
    """Temperature and bias minimizing NLL of sigmoid(logit / T + b) on held-out conversations."""
    log_t = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    y = labels.float()
    opt = torch.optim.LBFGS([log_t, b], lr=0.1, max_iter=200)

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(logits / log_t.exp() + b, y)
        loss.backward()
        return loss

    opt.step(closure)
    # Tiny or perfectly separated validation sets push the fit to extremes; keep it sane.
    return float(log_t.exp().clamp(0.05, 20.0)), float(b.clamp(-10.0, 10.0))


def evaluate(model, convs):
    view = sorted_view(convs)
    logits, sp = predict(model, view)
    y = torch.tensor([c["label"] for c in view])
    spk = torch.tensor([c["speaker"] for c in view])
    harmful = (y == 1) & ~torch.tensor([c["flat"] for c in view])
    return {
        "auc": auc(y.numpy(), logits.numpy()),
        "attribution": float((sp.argmax(-1)[harmful] == spk[harmful]).float().mean()) if harmful.any() else float("nan"),
        "loss": float(F.binary_cross_entropy_with_logits(logits, y.float())),
    }, logits, y


def validation_split(convs):
    """The conversations that choose the checkpoint and fit the calibration: the val split, or in tiny
    corpora without one the training conversations, rather than none at all."""
    return [c for c in convs if c["split"] == "val"] or [c for c in convs if c["split"] == "train"]


def vocab_size_of(tokenizer_path):
    """Rows the embedding needs: one past the tokenizer's highest id."""
    with open(tokenizer_path) as f:
        return max(json.load(f)["model"]["vocab"].values()) + 1


def load_pretrained(path, vocab_size):
    """build-tokenizer.ts's float32 [vocab, d] vectors (zero rows where an entry has none) and how many
    entries have one."""
    with open(path + ".json") as f:
        meta = json.load(f)
    if meta["rows"] != vocab_size:
        raise SystemExit(f"{path}: {meta['rows']} rows for a vocabulary of {vocab_size}")
    return torch.from_numpy(np.fromfile(path, dtype="<f4").reshape(meta["rows"], meta["dimensions"]).copy()), meta["covered"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", required=True)
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json: the embedding covers its ids")
    ap.add_argument("--out", required=True)
    ap.add_argument("--epochs", type=int, default=7)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--emb", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=96)
    ap.add_argument("--weight-decay", type=float, default=1e-3)
    ap.add_argument("--token-dropout", type=float, default=0.2)
    ap.add_argument("--view-rate", type=float, default=0.5, help="share of each batch also trained flat or re-cut (0 turns it off)")
    ap.add_argument("--view-one-line-rate", type=float, default=0.0, help="share of flat views rendered as one line, as the server reads a one-line flat export (0, the shipped recipe: every flat view keeps the pieces)")
    ap.add_argument("--view-merge-rate", type=float, default=0.0, help="share of the views that keep speakers rendered with each speaker's consecutive lines joined into one turn (0, the shipped recipe: they are cut into short lines)")
    ap.add_argument("--view-running", action=argparse.BooleanOptionalAction, default=False, help="also teach views the running-harm losses (benign prefixes, the moved onset); off in the shipped recipe")
    ap.add_argument("--turn-piece-tokens", type=int, default=MAX_TOKENS_PER_TURN, help="segment.max_tokens_per_turn the segments were exported with (export.ts --max-tokens): how merged-runs views cut a turn")
    ap.add_argument("--flat-piece-tokens", type=int, default=MAX_TOKENS_PER_FLAT_PIECE, help="segment.max_tokens_per_flat_piece the segments were exported with (export.ts --max-flat-tokens)")
    ap.add_argument("--view-consistency", type=float, default=1.0, help="weight pulling a view's probability to the original's")
    ap.add_argument("--prefix-weight", type=float, default=0.8, help="weight of the benign running-harm loss (0 turns it off)")
    ap.add_argument("--onset-weight", type=float, default=0.4, help="weight of the running-harm loss around a harmful chat's known onset (0 turns it off)")
    ap.add_argument("--embeddings", help="float32 matrix [vocab, d] of pretrained vectors (build-tokenizer.ts --embeddings-out)")
    ap.add_argument("--pretrained-residual", action="store_true", help="also learn a correction for words that have a pretrained vector")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    seed_everything(args.seed)
    os.makedirs(args.out, exist_ok=True)
    convs = load_conversations(args.segments)
    train = [c for c in convs if c["split"] == "train"]
    val = validation_split(convs)
    print(f"conversations: train {len(train)}, val {len(val)}", flush=True)

    vocab_size = vocab_size_of(args.tokenizer)
    pretrained = None
    if args.embeddings:
        pretrained, covered = load_pretrained(args.embeddings, vocab_size)
        print(f"pretrained vectors: {covered} of {vocab_size} entries", flush=True)
    model = ConversationRisk(vocab_size, emb=args.emb, hidden=args.hidden, pretrained=pretrained, pretrained_residual=args.pretrained_residual)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    steps = max(1, args.epochs * math.ceil(len(train) / args.batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.1)
    rng = random.Random(args.seed)
    view_rng = random.Random(args.seed + 1)
    history = []
    best = None
    for epoch in range(args.epochs):
        model.train()
        t0 = time.time()
        total = 0.0
        for b in batches(train, args.batch, True, rng):
            ids, spk, ages, owner = collate(b)
            target = torch.tensor([c["speaker"] for c in b])
            ids, spk, ages, target = augment(ids, spk, ages, owner, target, args.token_dropout)
            h, s, th = model(ids, spk, ages)
            cl, sp = aggregate(h, s, owner, len(b))
            y = torch.tensor([c["label"] for c in b], dtype=torch.float32)
            sided = torch.tensor([not c["flat"] for c in b])
            loss = F.binary_cross_entropy_with_logits(cl, y)
            loss = add_running_losses(loss, th, spk, y[owner], b, args)
            if args.view_rate > 0:
                # The score must not follow how the chat was cut into lines: the same chat flat or
                # re-cut is trained on its label and pulled towards the original's probability.
                chosen = [i for i in range(len(b)) if view_rng.random() < args.view_rate]
                if chosen:
                    views = [rendered_view(b[i], view_rng, args.view_one_line_rate, flat_tokens=args.flat_piece_tokens, merge_rate=args.view_merge_rate, turn_tokens=args.turn_piece_tokens) for i in chosen]
                    vids, vspk, vages, vowner = collate(views)
                    vtarget = target[chosen]
                    vids, vspk, vages, _ = augment(vids, vspk, vages, vowner, torch.full_like(vtarget, 2), args.token_dropout)
                    vh, vs, vth = model(vids, vspk, vages)
                    vl, _ = aggregate(vh, vs, vowner, len(views))
                    loss = loss + F.binary_cross_entropy_with_logits(vl, y[chosen])
                    if args.view_running:
                        # A view's running score follows the same rules as the original's: a benign
                        # chat stays low however it is cut, a harmful one rises where its onset landed.
                        loss = add_running_losses(loss, vth, vspk, y[chosen][vowner], views, args)
                    loss = loss + args.view_consistency * F.mse_loss(torch.sigmoid(vl), torch.sigmoid(cl[chosen]))
            if sided.any():
                loss = loss + F.nll_loss(torch.log(sp[sided] + 1e-8), target[sided])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            total += float(loss) * len(b)
        metrics, _, _ = evaluate(model, val)
        row = {"epoch": epoch + 1, "train_loss": total / len(train), "seconds": round(time.time() - t0, 1), **{f"val_{k}": v for k, v in metrics.items()}}
        history.append(row)
        print(json.dumps(row), flush=True)
        if best is None or metrics["loss"] < best[0]:
            best = (metrics["loss"], {k: v.clone() for k, v in model.state_dict().items()}, row)
    model.load_state_dict(best[1])
    print(f"selected epoch {best[2]['epoch']} (lowest validation loss)", flush=True)

    _, logits, y = evaluate(model, val)
    temperature, bias = fit_temperature(logits, y)
    print(f"calibration: temperature {temperature:.4f} bias {bias:.4f}", flush=True)
    export_contract_onnx(model.folded() if model.pretrained else model, os.path.join(args.out, "model.onnx"), vocab_size)
    torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump({
            "calibration": {"method": "temperature", "temperature": temperature, "bias": bias},
            "history": history,
            "selected_epoch": best[2],
            "hyperparameters": {k: v for k, v in vars(args).items() if k not in ("segments", "out", "tokenizer", "embeddings")},
            "pretrained_vectors": bool(args.embeddings),
            "conversations": {"train": len(train), "val": len(val)},
            "torch": torch.__version__,
        }, f, indent=2)


if __name__ == "__main__":
    main()
