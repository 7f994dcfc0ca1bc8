"""The exported segments as training reads them: conversations, batches and the pretrained vectors.

Segments come from scripts/data/export.ts, which runs the server's own encoder; the segment sizes
both sides cut with are scripts/data/segment.json's, read here and by export.ts.
"""
import json
import os
import random

import numpy as np
import torch

SPEAKERS = {"user1": 0, "user2": 1, "neither": 2}

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "segment.json")) as _f:
    SEGMENT = json.load(_f)
MAX_TURNS = SEGMENT["max_turns"]
# Pieces of a turn with a speaker.
MAX_TOKENS_PER_TURN = SEGMENT["max_tokens_per_turn"]
# Pieces of unknown-speaker turns (--flat-piece-tokens). It divides max_tokens_per_turn (export.ts
# checks), so cutting each piece of a turn at it cuts the turn as the server does. 32 would cut flat
# text like any turn (contract 3, model 3.2.0).
MAX_TOKENS_PER_FLAT_PIECE = SEGMENT["max_tokens_per_flat_piece"]


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
                    "flat": True, "onset": r.get("onset_piece", -1), "family": r.get("family", ""), "source": r.get("source", ""),
                }
                if "side_ages" in r:  # corpus.ts --side-ages: both sides' true ages (losses.py side_age_loss)
                    c["side_ages"] = r["side_ages"]
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
    return torch.as_tensor(ids), torch.as_tensor(spk), torch.as_tensor(ages), torch.tensor(owner)


def batches(convs, size, shuffle, rng):
    # Bucket by length so padding stays small; shuffle bucket order each epoch.
    idx = sorted(range(len(convs)), key=lambda i: sum(len(s[1]) for s in convs[i]["segments"]))
    chunks = [idx[i: i + size] for i in range(0, len(idx), size)]
    if shuffle:
        rng.shuffle(chunks)
    for ch in chunks:
        yield [convs[i] for i in ch]


def sorted_view(convs):
    return sorted(convs, key=lambda c: sum(len(s[1]) for s in c["segments"]))


def validation_split(convs):
    """The conversations that choose the checkpoint and fit the calibration: the val split, or in tiny
    corpora without one the training conversations, rather than none at all."""
    return [c for c in convs if c["split"] == "val"] or [c for c in convs if c["split"] == "train"]


def vocab_size_of(tokenizer_path):
    """Rows the embedding needs: one past the tokenizer's highest id."""
    with open(tokenizer_path) as f:
        return max(json.load(f)["model"]["vocab"].values()) + 1


def minilm_dimensions(path):
    """How many of the vectors file's dimensions are all-MiniLM-L6-v2's reading of each word (word_vectors.py); 0 for build-tokenizer.ts's own."""
    with open(path + ".json") as f:
        return int(json.load(f).get("minilm_dimensions", 0))


def load_pretrained(path, vocab_size):
    """build-tokenizer.ts's float32 [vocab, d] vectors (zero rows where an entry has none) and how many
    entries have one."""
    with open(path + ".json") as f:
        meta = json.load(f)
    if meta["rows"] != vocab_size:
        raise SystemExit(f"{path}: {meta['rows']} rows for a vocabulary of {vocab_size}")
    return torch.as_tensor(np.fromfile(path, dtype="<f4").reshape(meta["rows"], meta["dimensions"]).copy()), meta["covered"]
