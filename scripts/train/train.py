"""Trains the conversation-risk model on exported segments, calibrates it and exports ONNX.

  .venv/bin/python scripts/train/train.py --segments segs.jsonl --tokenizer tokenizer.json --out DIR [--epochs 7]

Reads the segment JSONL written by scripts/data/export.ts (the server's own encoder), trains at
conversation level (max over segment logits, harm-weighted speaker mixture: the aggregation of
docs/model-contract.md), fits temperature + bias on the validation conversations after that same
aggregation, and writes DIR/model.onnx and DIR/training.json.

The package, one concern a file: data.py (segments, batches, vectors), views.py (other renderings and
augmentation), model.py (the network), losses.py (aggregation, running-harm losses), validation.py
and metrics.py (figures on validation; the project's one ROC-AUC), calibration.py, onnx_export.py;
this file is the training loop; ensemble.py joins members.
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from calibration import fit_temperature  # noqa: E402
from data import (  # noqa: E402
    MAX_TOKENS_PER_FLAT_PIECE, MAX_TOKENS_PER_TURN, batches, collate, load_conversations, load_pretrained, minilm_dimensions,
    seed_everything, validation_split, vocab_size_of,
)
from losses import add_running_losses, aggregate, distill_loss, side_age_loss, side_age_targets  # noqa: E402
from model import ConversationRisk  # noqa: E402
from onnx_export import export_contract_onnx  # noqa: E402
from teacher import load_teacher, teacher_rows  # noqa: E402
from validation import evaluate  # noqa: E402
from views import age_dropout, age_token_ids, augment, draw_age_dropout, drop_ages, piece_dropout, rendered_view  # noqa: E402
from word_swaps import neighbour_table, swap_words  # noqa: E402


def parse_weights(specs, option, key):
    """NAME=W options (--harm-weight, --source-weight, --piece-dropout) as {name: value}, each value above 0."""
    out = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = 0.0
        if not sep or not name or not weight > 0:
            raise SystemExit(f"{option} is {key}=W with W above 0, not {spec}")
        out[name] = weight
    return out


def label_weights(batch, harm_weights, source_weights):
    """Each conversation's weight on the label loss: harm_weights[family] for a harmful one of a weighted
    family, times source_weights[source] for any one of a weighted source, 1 otherwise; None (unweighted,
    the releases' loss) when nothing is weighted."""
    if not harm_weights and not source_weights:
        return None
    return torch.tensor([(harm_weights.get(c["family"], 1.0) if c["label"] == 1 else 1.0) * source_weights.get(c.get("source", ""), 1.0)
                         for c in batch], dtype=torch.float32)


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
    ap.add_argument("--device", default="cpu", help="where the loop runs: cpu (every release; npm run train reproduces it byte for byte) or cuda, for previews only: a GPU's float sums differ, so its member is no released one (docs/training.md, 'Previews on a GPU')")
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
    ap.add_argument("--blind-reading", action=argparse.BooleanOptionalAction, default=False, help="read every turn as flat text is read, speakers only choosing what each side's head pools (model.py); off in every release so far")
    ap.add_argument("--teacher", help="directory of teacher.py's embeddings of the training pieces: distil them into the piece encoder (off in every release so far)")
    ap.add_argument("--teacher-weight", type=float, default=0.5, help="weight of the distillation loss (losses.py distill_loss)")
    ap.add_argument("--checkpoint", choices=("val-loss", "last"), default="val-loss", help="the epoch kept: the lowest validation loss (every release) or the last")
    ap.add_argument("--side-ages", type=float, default=0.0, help="weight of the side-age loss: a head taught from each side's pooled states whether that side is a minor, from the corpus's true ages (corpus.ts --side-ages); 0 (every release before 3.12.0) makes no such head")
    ap.add_argument("--harm-reads-sides", action=argparse.BooleanOptionalAction, default=False, help="the harm head also reads the side-age head's two logits, lower and higher (model.py; needs --side-ages, refused with --blind-reading)")
    ap.add_argument("--harm-weight", action="append", default=[], metavar="FAMILY=W", help="weight W on the label loss of FAMILY's harmful conversations (and their views), repeatable; none in every release so far")
    ap.add_argument("--source-weight", action="append", default=[], metavar="SOURCE=W", help="weight W on the label loss of every conversation from SOURCE (corpus source, both classes: sms-spam-collection+generator), repeatable; none in every release so far")
    ap.add_argument("--piece-dropout", action="append", default=[], metavar="FAMILY=P", help="share P of FAMILY's pieces (lines) emptied in training (views.py piece_dropout), repeatable; none in every release so far")
    ap.add_argument("--word-swap", type=float, default=0.0, help="share of the tokens that have a near neighbour among the pretrained vectors replaced by one (word_swaps.py; needs --embeddings), in the batch and its views; 0 in every release so far")
    ap.add_argument("--word-swap-neighbours", type=int, default=4, help="how many nearest neighbours a swap draws from")
    ap.add_argument("--word-swap-min-cosine", type=float, default=0.7, help="the least cosine a neighbour has")
    ap.add_argument("--age-dropout", type=float, default=0.0, help="share of the conversations whose every number from 10 to 59 is emptied from the text, drawn again for the views; the age fields stay (views.py age_dropout); 0 in every release so far")
    ap.add_argument("--age-dropout-whole", action=argparse.BooleanOptionalAction, default=False, help="with --age-dropout: the chosen conversations' age fields are emptied with their text, and each view follows its conversation's draw rather than drawing its own (views.py drop_ages), so a chosen window tells nothing of either side's age but what its lines say")
    args = ap.parse_args()
    if args.word_swap > 0 and not args.embeddings:
        raise SystemExit("--word-swap draws neighbours from the pretrained vectors: give --embeddings")
    piece_rates = parse_weights(args.piece_dropout, "--piece-dropout", "FAMILY")
    if any(p >= 1 for p in piece_rates.values()):
        raise SystemExit("--piece-dropout takes a share below 1")
    harm_weights = parse_weights(args.harm_weight, "--harm-weight", "FAMILY")
    source_weights = parse_weights(args.source_weight, "--source-weight", "SOURCE")
    if args.age_dropout_whole and args.age_dropout <= 0:
        raise SystemExit("--age-dropout-whole says how --age-dropout empties ages: give --age-dropout a share")
    if args.harm_reads_sides and args.side_ages <= 0:
        raise SystemExit("--harm-reads-sides reads the side-age head: give --side-ages a weight")

    torch.set_num_threads(args.threads)
    if args.device != "cpu":
        if args.device.startswith("cuda") and not torch.cuda.is_available():
            raise SystemExit(f"--device {args.device}: torch sees no GPU here")
        # Every tensor made from here on (the data's too: data.py makes them with as_tensor) lands there.
        torch.set_default_device(args.device)
    seed_everything(args.seed)
    os.makedirs(args.out, exist_ok=True)
    convs = load_conversations(args.segments)
    train = [c for c in convs if c["split"] == "train"]
    val = validation_split(convs)
    print(f"conversations: train {len(train)}, val {len(val)}", flush=True)

    vocab_size = vocab_size_of(args.tokenizer)
    pretrained = None
    minilm_words = 0
    if args.embeddings:
        pretrained, covered = load_pretrained(args.embeddings, vocab_size)
        minilm_words = minilm_dimensions(args.embeddings)
        print(f"pretrained vectors: {covered} of {vocab_size} entries{f', with MiniLM reading of each in {minilm_words} more dimensions' if minilm_words else ''}", flush=True)
    age_ids = age_token_ids(args.tokenizer) if args.age_dropout > 0 else None
    if age_ids is not None:
        print(f"age dropout: {age_ids.numel()} number entries, in {args.age_dropout} of the conversations", flush=True)
    swaps = None
    if args.word_swap > 0:
        swaps = neighbour_table(pretrained, minilm_words, args.word_swap_neighbours, args.word_swap_min_cosine)
        print(f"word swaps: {int((swaps[:, 0] >= 0).sum())} entries have a neighbour, rate {args.word_swap}", flush=True)
    model = ConversationRisk(vocab_size, emb=args.emb, hidden=args.hidden, pretrained=pretrained, pretrained_residual=args.pretrained_residual,
                             blind_reading=args.blind_reading, side_ages=args.side_ages > 0, harm_reads_sides=args.harm_reads_sides)
    if args.side_ages > 0:
        known = sum(1 for c in train if "side_ages" in c)
        if known == 0:
            raise SystemExit("--side-ages: the segments hold no true ages (build the corpus with corpus.ts --side-ages)")
        print(f"side ages: {known} of {len(train)} training conversations, weight {args.side_ages}", flush=True)
    params = list(model.parameters())
    teacher = projection = None
    if args.teacher:
        # The projection is the teacher's side of the loss: trained with the student, never exported.
        teacher, index = load_teacher(args.teacher)
        projection = torch.nn.Linear(args.hidden, teacher.shape[1])
        params += list(projection.parameters())
        for c in train:
            c["teacher_rows"] = teacher_rows(c, index)
        del index
        print(f"teacher: {teacher.shape[0]} piece embeddings, weight {args.teacher_weight}", flush=True)
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)
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
        distilled = 0.0
        aged = 0.0
        for b in batches(train, args.batch, True, rng):
            ids, spk, ages, owner = collate(b)
            target = torch.tensor([c["speaker"] for c in b])
            if teacher is not None:
                rows = torch.full(spk.shape, -1, dtype=torch.int64)
                r = 0
                for c in b:
                    for seg_rows in c["teacher_rows"]:
                        rows[r, : len(seg_rows)] = torch.tensor(seg_rows, dtype=torch.int64)
                        r += 1
                distill = distill_loss(model.piece_content(ids), rows, projection, teacher)
            ids = piece_dropout(ids, owner, b, piece_rates)
            if args.age_dropout_whole:
                aged_out = draw_age_dropout(len(b), args.age_dropout)
                ids, ages = drop_ages(ids, ages, owner, aged_out, age_ids)
            else:
                ids = age_dropout(ids, owner, len(b), age_ids, args.age_dropout)
            if swaps is not None:
                ids = swap_words(ids, swaps, args.word_swap)
            ids, spk, ages, target, side_targets = augment(ids, spk, ages, owner, target, args.token_dropout,
                                                          side_age_targets(b) if args.side_ages > 0 else None)
            h, s, th = model(ids, spk, ages)
            # Read before the views' forward, which keeps its own side ages on the model.
            sided_ages = side_age_loss(model.side_age_out, side_targets, owner) if args.side_ages > 0 else None
            cl, sp = aggregate(h, s, owner, len(b))
            y = torch.tensor([c["label"] for c in b], dtype=torch.float32)
            sided = torch.tensor([not c["flat"] for c in b])
            w = label_weights(b, harm_weights, source_weights)
            loss = F.binary_cross_entropy_with_logits(cl, y, weight=w)
            loss = add_running_losses(loss, th, spk, y[owner], b, args)
            if teacher is not None:
                loss = loss + args.teacher_weight * distill
            if sided_ages is not None:
                loss = loss + args.side_ages * sided_ages
            if args.view_rate > 0:
                # The score must not follow how the chat was cut into lines: the same chat flat or
                # re-cut is trained on its label and pulled towards the original's probability.
                chosen = [i for i in range(len(b)) if view_rng.random() < args.view_rate]
                if chosen:
                    views = [rendered_view(b[i], view_rng, args.view_one_line_rate, flat_tokens=args.flat_piece_tokens, merge_rate=args.view_merge_rate, turn_tokens=args.turn_piece_tokens) for i in chosen]
                    vids, vspk, vages, vowner = collate(views)
                    if args.age_dropout_whole:
                        vids, vages = drop_ages(vids, vages, vowner, aged_out[chosen], age_ids)
                    else:
                        vids = age_dropout(vids, vowner, len(views), age_ids, args.age_dropout)
                    vtarget = target[chosen]
                    if swaps is not None:
                        vids = swap_words(vids, swaps, args.word_swap)
                    vids, vspk, vages, _, _ = augment(vids, vspk, vages, vowner, torch.full_like(vtarget, 2), args.token_dropout)
                    vh, vs, vth = model(vids, vspk, vages)
                    vl, _ = aggregate(vh, vs, vowner, len(views))
                    loss = loss + F.binary_cross_entropy_with_logits(vl, y[chosen], weight=None if w is None else w[chosen])
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
            if teacher is not None:
                distilled += float(distill) * len(b)
            if sided_ages is not None:
                aged += float(sided_ages) * len(b)
        metrics, _, _ = evaluate(model, val)
        row = {"epoch": epoch + 1, "train_loss": total / len(train), **({"train_distill": distilled / len(train)} if teacher is not None else {}), **({"train_side_ages": aged / len(train)} if args.side_ages > 0 else {}), "seconds": round(time.time() - t0, 1), **{f"val_{k}": v for k, v in metrics.items()}}
        history.append(row)
        print(json.dumps(row), flush=True)
        if best is None or metrics["loss"] < best[0] or args.checkpoint == "last":
            best = (metrics["loss"], {k: v.clone() for k, v in model.state_dict().items()}, row)
    model.load_state_dict(best[1])
    print(f"selected epoch {best[2]['epoch']} ({'lowest validation loss' if args.checkpoint == 'val-loss' else 'the last'})", flush=True)

    _, logits, y = evaluate(model, val)
    temperature, bias = fit_temperature(logits, y)
    print(f"calibration: temperature {temperature:.4f} bias {bias:.4f}", flush=True)
    if args.device != "cpu":
        # Exported and saved from the CPU, so model.pt loads anywhere and the export traces as a release's does.
        torch.set_default_device("cpu")
        model = model.cpu()
    export_contract_onnx(model.folded() if model.pretrained else model, os.path.join(args.out, "model.onnx"), vocab_size)
    torch.save(model.state_dict(), os.path.join(args.out, "model.pt"))
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump({
            "calibration": {"method": "temperature", "temperature": temperature, "bias": bias},
            "history": history,
            "selected_epoch": best[2],
            # The teacher's weight only where it taught, the side ages, label weights, piece and age dropout
            # only where they were given, so a member trained without them records what it always did.
            "hyperparameters": {**{k: v for k, v in vars(args).items() if k not in ("segments", "out", "tokenizer", "embeddings", "teacher", "teacher_weight", "side_ages", "harm_reads_sides", "harm_weight", "source_weight", "piece_dropout", "device", "word_swap", "word_swap_neighbours", "word_swap_min_cosine", "age_dropout", "age_dropout_whole")},
                                **({"age_dropout": args.age_dropout} if args.age_dropout > 0 else {}),
                                **({"age_dropout_whole": True} if args.age_dropout_whole else {}),
                                **({"teacher_weight": args.teacher_weight} if args.teacher else {}),
                                **({"side_ages": args.side_ages, "harm_reads_sides": args.harm_reads_sides} if args.side_ages > 0 else {}),
                                **({"harm_weights": harm_weights} if harm_weights else {}),
                                **({"source_weights": source_weights} if source_weights else {}),
                                **({"piece_dropout": piece_rates} if piece_rates else {}),
                                **({"word_swap": args.word_swap, "word_swap_neighbours": args.word_swap_neighbours,
                                    "word_swap_min_cosine": args.word_swap_min_cosine} if args.word_swap > 0 else {}),
                                # Only where the vectors carry MiniLM's reading of each word (word_vectors.py), so
                                # a member on build-tokenizer.ts's own vectors records what it always did.
                                **({"minilm_words": minilm_words} if minilm_words else {}),
                                # Only off the CPU: such a member is a preview, and its manifest says so.
                                **({"device": args.device} if args.device != "cpu" else {})},
            "pretrained_vectors": bool(args.embeddings),
            "conversations": {"train": len(train), "val": len(val)},
            "torch": torch.__version__,
        }, f, indent=2)


if __name__ == "__main__":
    main()
