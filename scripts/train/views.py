"""Other renderings of a training conversation, built from its pieces: flat, re-cut into short lines,
merged runs, and the batch augmentations (token dropout, speaker mirroring, piece and age dropout). A
model trained on them scores a chat the same however the client cut it into lines.
"""
import json
import re

import torch

from data import MAX_TOKENS_PER_FLAT_PIECE, MAX_TOKENS_PER_TURN, MAX_TURNS

VIEW_CHUNK_TOKENS = (3, 4, 5, 6, 8)


def augment(ids, spk, ages, owner, target, token_dropout, sides=None):
    """Token dropout (against memorising exact phrasings) and speaker mirroring: swapping user1 and
    user2 (ids, age halves and the predator label) in half the conversations teaches attribution
    that depends on what each side says, not on who spoke first. `sides` ([conversations, 2], one
    value per side, such as the side-age targets) is swapped with them; returned fifth (None when not given)."""
    if token_dropout > 0:
        ids = ids * (torch.rand(ids.shape) >= token_dropout).to(ids.dtype)
    flip = torch.rand(target.shape[0]) < 0.5
    seg_flip = flip[owner]
    swapped = torch.where(spk == 1, torch.full_like(spk, 2), torch.where(spk == 2, torch.full_like(spk, 1), spk))
    spk = torch.where(seg_flip.unsqueeze(-1), swapped, spk)
    ages = torch.where(seg_flip.unsqueeze(-1), torch.cat([ages[:, 4:], ages[:, :4]], -1), ages)
    target = torch.where(flip & (target < 2), 1 - target, target)
    if sides is not None:
        sides = torch.where(flip.unsqueeze(-1), sides.flip(-1), sides)
    return ids, spk, ages, target, sides


def age_token_ids(tokenizer_path, low=10, high=59):
    """The ids of the vocabulary's whole-number entries from `low` to `high`: how a stated age reads when
    it stands as a word (`14 f`, `im 32`). Numbers the vocabulary lacks (3.15.0's: 52, 54, 57, 58) and
    ages written into a word (`f14`, split `f1` `##4`) are not among them."""
    with open(tokenizer_path) as f:
        vocab = json.load(f)["model"]["vocab"]
    return torch.tensor(sorted(i for w, i in vocab.items() if re.fullmatch(r"\d{2}", w) and low <= int(w) <= high), dtype=torch.int64)


def age_dropout(ids, owner, conversations, age_ids, rate):
    """In a share `rate` of the conversations, every token that could be a stated age emptied from the
    text, in all their segments, so that the text reads as a real window that states no age, where only
    what each side writes of school, a parent, work or a car tells who is a child. The request's age
    fields (`age_a`, `age_b`: the age features, given in about half the generated chats) are left as
    they are, and each call draws its own conversations: train.py calls it for a batch and again for
    its views (run 111). `draw_age_dropout` with `drop_ages` is the variant that empties both and lets
    a view follow its conversation's draw."""
    if rate <= 0 or age_ids.numel() == 0:
        return ids
    return drop_ages(ids, None, owner, draw_age_dropout(conversations, rate), age_ids)[0]


def draw_age_dropout(conversations, rate):
    """Which conversations of a batch lose their ages: one draw each, which their views then share."""
    return torch.rand(conversations) < rate


def drop_ages(ids, ages, owner, chosen, age_ids):
    """Every age token of the `chosen` conversations ([conversations] bools) emptied from their segments'
    text and, when `ages` is given, their age features zeroed as a request without `age_a` and `age_b`
    reads (ages.ts: an absent age is all zeros): the window then tells nothing of either side's age but
    what its lines say. Returns (ids, ages)."""
    seg = chosen[owner]
    is_age = torch.isin(ids, age_ids)
    ids = ids * (~(is_age & seg.view(-1, *([1] * (ids.dim() - 1))))).to(ids.dtype)
    if ages is not None:
        ages = ages * (~seg).unsqueeze(-1).to(ages.dtype)
    return ids, ages


def piece_dropout(ids, owner, convs, rates):
    """Whole pieces (lines) of the conversations of the families in `rates` ({family: share}) emptied at
    that share, before augment's token dropout: a family whose harm fills the window (a courtship, where
    every line is the harm) is then also learnt from a few of its familiar lines, as a window in unseen
    wording reads. Give the benign twins the same share, or empty lines become a cue for the label."""
    if not rates:
        return ids
    share = torch.tensor([rates.get(c["family"], 0.0) for c in convs], dtype=torch.float32)[owner]
    if not (share > 0).any():
        return ids
    drop = torch.rand(ids.shape[:2]) < share.unsqueeze(-1)
    return ids * (~drop).unsqueeze(-1).to(ids.dtype)


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
