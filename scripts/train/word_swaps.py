"""Word swaps: a training augmentation that puts a word's near neighbour in its place.

The relationship windows are lost in unseen wording ("Where the relationship windows are lost",
docs/training.md): the network finds a courtship by the sum of its familiar lines. Token dropout
teaches it to do without a word; a swap teaches it that `calling` says what `call` says and
`adorable` what `cute` does, so a line in other words lands nearer the lines it knows.

Neighbours come from the pretrained vectors train.py --embeddings reads (whole words only: WordPiece
pieces, numbers and specials have none, so an age is never swapped), by cosine over the part of each
row that is all-MiniLM-L6-v2's reading of the word when there is one (word_vectors.py), else the
whole row. Training time only: nothing of it is exported.
"""
import torch
import torch.nn.functional as F


def neighbour_table(vectors, minilm_dimensions=0, k=4, min_cosine=0.7, chunk=2048):
    """[vocab, d] vectors (zero rows: no vector) -> int64 [vocab, k]: each entry's k nearest other entries
    by cosine at or above min_cosine, best first, -1 where there are fewer (every slot -1 for entries
    without a vector)."""
    x = vectors[:, vectors.shape[1] - minilm_dimensions:] if minilm_dimensions else vectors
    has = x.abs().sum(-1) > 0
    rows = has.nonzero().squeeze(-1)
    unit = F.normalize(x[rows].to(torch.float32), dim=-1)
    table = torch.full((vectors.shape[0], k), -1, dtype=torch.int64)
    for start in range(0, rows.shape[0], chunk):
        sims = unit[start:start + chunk] @ unit.T
        own = torch.arange(start, min(start + chunk, rows.shape[0]))
        sims[torch.arange(own.shape[0]), own] = -2.0  # never its own neighbour
        best, at = sims.topk(k, dim=-1)
        table[rows[own]] = torch.where(best >= min_cosine, rows[at], torch.full_like(at, -1))
    return table


def swap_words(ids, table, rate):
    """Each token that has a neighbour is replaced, at `rate`, by one of its neighbours drawn evenly.
    Padding (id 0) has none, so the masks and padding stay as they were."""
    if rate <= 0:
        return ids
    candidates = table[ids]  # [..., k]
    count = (candidates >= 0).sum(-1)
    swap = (torch.rand(ids.shape) < rate) & (count > 0)
    pick = (torch.rand(ids.shape) * count.clamp(min=1)).long().clamp(max=table.shape[1] - 1)
    chosen = candidates.gather(-1, pick.unsqueeze(-1)).squeeze(-1)
    return torch.where(swap, chosen, ids)
