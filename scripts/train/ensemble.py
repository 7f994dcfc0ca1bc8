"""Joins members trained by train.py (same segments and tokenizer, different seeds) into one model:
the mean of their heads (model.py `Ensemble`), calibrated by temperature and bias on the validation
conversations as one member is, and exported with the contract's tensors, so the service and the
contract do not change. Each member's embedding table, almost all of its size, is stored in float16
(`--no-half-tables` keeps float32), so two members take about the file of one.

  python3 scripts/train/ensemble.py --member DIR --member DIR --segments S --tokenizer T \
      [--embeddings E [--embeddings E2]] --out DIR

--embeddings once gives every member trained with pretrained vectors the same file; given once per
member, in the members' order, each member reads its own (train.sh MINILM_WORDS: the first members'
words also carry all-MiniLM-L6-v2's reading, word_vectors.py).

Each member DIR holds train.py's model.pt and training.json (or rebuild_members.py's, a member of a
package rebuilt as it ships); two or more members with the same
architecture, vectors, flat cut and training and validation counts, differing in seed or in training
options (TRAINING_OPTIONS), or it refuses. Writes model.onnx and training.json
(the ensemble's calibration and validation figures, each member's seed, chosen epoch and history).
"""
import argparse
import json
import os

import torch

from model import ConversationRisk, Ensemble
from onnx_export import export_contract_onnx
from calibration import fit_member_weights, fit_temperature
from data import load_conversations, load_pretrained, minilm_dimensions, sorted_view, validation_split, vocab_size_of
from validation import evaluate, member_segment_logits


def read_info(directory):
    with open(os.path.join(directory, "training.json")) as f:
        return json.load(f)


def reads_vectors(info):
    """Whether a member is loaded with pretrained vectors beside its own table: trained with them, and not
    stored folded (a member rebuilt from a package, rebuild_members.py, holds one table, the vectors in it)."""
    return bool(info.get("pretrained_vectors")) and not info.get("folded")


def load_member(directory, info, vocab_size, pretrained, half_table):
    hp = info["hyperparameters"]
    with_vectors = reads_vectors(info)
    if with_vectors and pretrained is None:
        raise SystemExit(f"{directory}: trained with pretrained vectors; pass --embeddings")
    model = ConversationRisk(vocab_size, emb=hp["emb"], hidden=hp["hidden"], pretrained=pretrained if with_vectors else None,
                             pretrained_residual=hp.get("pretrained_residual", False), blind_reading=hp.get("blind_reading", False),
                             side_ages=hp.get("side_ages", 0) > 0, harm_reads_sides=hp.get("harm_reads_sides", False))
    model.load_state_dict(torch.load(os.path.join(directory, "model.pt"), map_location="cpu"))
    if model.pretrained or half_table:
        model = model.folded(half_table)
    return model.eval()


# What members may differ in besides their seed: how they were trained. The architecture, the
# vocabulary's vectors, the flat cut and the data must be the same, or their mean is not one model.
# blind_reading is among them: each member reads with its own forward (load_member), and the mean of
# their heads is what the contract's outputs are built from either way; so are the side ages (a member
# with or without the side-age head, reading it or not: train.py --side-ages, --harm-reads-sides); so is
# the device a preview member trained on (train.py --device; recorded only off the CPU).
TRAINING_OPTIONS = {"seed", "view_rate", "view_consistency", "view_one_line_rate", "view_merge_rate", "view_running", "prefix_weight",
                    "onset_weight", "token_dropout", "lr", "weight_decay", "epochs", "batch", "threads", "checkpoint", "blind_reading",
                    "teacher_weight", "side_ages", "harm_reads_sides", "harm_weights", "source_weights", "piece_dropout", "minilm_words",
                    "device", "word_swap", "word_swap_neighbours", "word_swap_min_cosine", "age_dropout", "age_dropout_whole"}


def recipe_of(info):
    """A member's training options, seed aside: what the manifest records when members differ in them."""
    return {k: v for k, v in info["hyperparameters"].items() if k in TRAINING_OPTIONS and k != "seed"}


def check_members(infos):
    """Members must share architecture and data and differ in seed or training recipe, or their mean is
    not what the docs call it (the same member twice would be one network weighed double)."""
    if len(infos) < 2:
        raise SystemExit("an ensemble needs two members or more; one network ships as train.py writes it")
    trained = [json.dumps({"seed": i["hyperparameters"]["seed"], **recipe_of(i)}, sort_keys=True) for i in infos]
    if len(set(trained)) != len(trained):
        raise SystemExit(f"members share a seed and a recipe: {trained}")
    shared = {json.dumps({
        "hyperparameters": {k: v for k, v in i["hyperparameters"].items() if k not in TRAINING_OPTIONS},
        "pretrained_vectors": i.get("pretrained_vectors", False),
        "conversations": i["conversations"],
    }, sort_keys=True) for i in infos}
    if len(shared) > 1:
        raise SystemExit("members differ in more than their seed and training options: " + " | ".join(sorted(shared)))


def weigh_members(members, scales, view):
    """The members' shares fitted on the validation conversations `view` (calibration.py
    fit_member_weights), and the members weighed by them: (weights, loss, members). A member taken from a
    package whose shares were fitted holds its heads at that package's M x weight (rebuild_members.py
    `heads_scaled_by`, here `scales`): it is fitted as the member it was, and weighed by the ratio, which
    is exactly 1 where its share comes out the same, so such a package is written again byte for byte."""
    seg_logits, owner = member_segment_logits(members, view)
    seg_logits = seg_logits / torch.tensor(scales).unsqueeze(-1)
    weights, loss = fit_member_weights(seg_logits, owner, len(view), torch.tensor([c["label"] for c in view]))
    factors = [len(members) * w / s for w, s in zip(weights, scales)]
    return weights, loss, [m if f == 1.0 else m.weighed(f) for m, f in zip(members, factors)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--member", action="append", required=True, help="a train.py output directory (repeat)")
    ap.add_argument("--segments", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--embeddings", action="append", default=[], help="the float32 vectors the members were trained with: once for all, or once per member in their order")
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fit-weights", action="store_true",
                    help="weigh the members by the share (a 0.05 grid) whose calibrated log loss on validation is lowest, rather than equally")
    ap.add_argument("--half-tables", action=argparse.BooleanOptionalAction, default=True,
                    help="store each member's embedding table in float16 (half the file; outputs move by about 1e-3)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    vocab_size = vocab_size_of(args.tokenizer)
    if len(args.embeddings) not in (0, 1, len(args.member)):
        raise SystemExit(f"--embeddings: give one file for every member or one per member ({len(args.member)}), not {len(args.embeddings)}")
    files = args.embeddings * len(args.member) if len(args.embeddings) == 1 else args.embeddings or [None] * len(args.member)
    loaded = {f: load_pretrained(f, vocab_size)[0] for f in set(files) if f is not None}
    infos = [read_info(d) for d in args.member]
    check_members(infos)
    for d, i, f in zip(args.member, infos, files):
        if f is not None and reads_vectors(i) and i["hyperparameters"].get("minilm_words", 0) != minilm_dimensions(f):
            raise SystemExit(f"{d}: trained with {'' if i['hyperparameters'].get('minilm_words') else 'no '}MiniLM reading of its words; {f} is not its vectors file")
    members = [load_member(d, i, vocab_size, loaded.get(f), args.half_tables) for d, i, f in zip(args.member, infos, files)]

    val = validation_split(load_conversations(args.segments))
    weights = None
    if args.fit_weights:
        weights, loss, members = weigh_members(members, [i.get("heads_scaled_by", 1.0) for i in infos], sorted_view(val))
        print(f"member weights fitted on validation: {', '.join(f'{w:.2f}' for w in weights)} (calibrated log loss {loss:.5f})", flush=True)
    model = Ensemble(members).eval()
    metrics, logits, y = evaluate(model, val)
    temperature, bias = fit_temperature(logits, y)
    print(f"ensemble of {len(infos)}: validation {json.dumps(metrics)}; calibration: temperature {temperature:.4f} bias {bias:.4f}", flush=True)

    os.makedirs(args.out, exist_ok=True)
    export_contract_onnx(model, os.path.join(args.out, "model.onnx"), vocab_size)
    first = infos[0]
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump({
            "calibration": {"method": "temperature", "temperature": temperature, "bias": bias},
            "validation": metrics,
            "history": [],
            "members": [{
                "seed": i["hyperparameters"]["seed"], "recipe": recipe_of(i), "selected_epoch": i["selected_epoch"],
                "calibration": i["calibration"], "history": i["history"],
                # Fitted weights only (--fit-weights): the member's heads in model.onnx are M x weight times its own.
                **({"weight": weights[k]} if weights is not None else {}),
                # A member taken from a package as it shipped (train.sh --member-from) says which.
                **({"rebuilt_from": i["rebuilt_from"]} if "rebuilt_from" in i else {}),
            } for k, i in enumerate(infos)],
            # The first member's; where members were trained differently, each one's options are in members[].recipe.
            "hyperparameters": {k: v for k, v in first["hyperparameters"].items() if k != "seed"},
            "pretrained_vectors": first.get("pretrained_vectors", False),
            "half_tables": args.half_tables,
            "conversations": first["conversations"],
            "torch": torch.__version__,
        }, f, indent=2)


if __name__ == "__main__":
    main()
