"""What training minimises besides the conversation's label: the contract's aggregation over segments,
the running-harm losses (benign prefixes stay low, harm rises at a known onset), the teacher's
distillation and the side-age loss.
"""
import numpy as np
import torch
import torch.nn.functional as F


def conversation_logits(harm_logit, owner, n):
    """Contract aggregation of the harm: each conversation's max segment logit."""
    return torch.full((n,), -1e9).scatter_reduce(0, owner, harm_logit, reduce="amax", include_self=True)


def aggregate(harm_logit, speaker_logits, owner, n):
    """Contract aggregation: max harm logit per conversation; harm-weighted mean of speaker softmax."""
    conv_logit = conversation_logits(harm_logit, owner, n)
    w = torch.sigmoid(harm_logit) + 1e-6
    s = torch.softmax(speaker_logits, -1)
    num = torch.zeros(n, 3).index_add(0, owner, s * w.unsqueeze(-1))
    den = torch.zeros(n).index_add(0, owner, w)
    return conv_logit, num / den.unsqueeze(-1)


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
    return torch.as_tensor(target), torch.as_tensor(mask)


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


def distill_loss(content, rows, projection, teacher):
    """The pretrained teacher's reading pulled into the piece encoder (train.py --teacher): each real
    piece's content vector, through a trained projection that is not exported, is taught the cosine
    direction of the teacher's embedding of that piece's text, so pieces the teacher reads alike
    (`cant talk, mom is home` and `my parents r home`) are encoded alike though the labels never
    paired them. content [S, T, H]; rows [S, T] teacher rows (-1 where none); teacher [R, D] float16."""
    keep = rows >= 0
    if not keep.any():
        return content.sum() * 0.0
    student = F.normalize(projection(content[keep]), dim=-1)
    target = teacher[rows[keep]].to(torch.float32)
    return (1.0 - (student * target).sum(-1)).mean()


# The age below which a side counts as a minor (the policy's: an adult's pursuit of a minor).
ADULT_AGE = 18


def side_age_targets(convs):
    """Each conversation's [user1, user2] target for the side-age head: 1 a minor, 0 an adult, -1 where
    the corpus kept no true ages (real chats, operator data) or the text names nobody (flat)."""
    rows = []
    for c in convs:
        ages = c.get("side_ages")
        rows.append([-1.0, -1.0] if ages is None or c["flat"] else [float(a < ADULT_AGE) for a in ages])
    return torch.tensor(rows, dtype=torch.float32)


def side_age_loss(side_age_out, targets, owner):
    """Binary cross-entropy of each segment's side-age logits (model.py side_age_out) against its
    conversation's targets ([conversations, 2], mirrored with the batch), over the sides that spoke in
    the segment and whose age is known (0 when none is)."""
    a1, a2, spoke1, spoke2 = side_age_out
    logits = torch.stack([a1, a2], -1)
    target = targets[owner]
    mask = torch.stack([spoke1, spoke2], -1) * (target >= 0).to(torch.float32)
    if mask.sum() == 0:
        return logits.sum() * 0.0
    per_side = F.binary_cross_entropy_with_logits(logits, target.clamp(min=0.0), reduction="none")
    return (per_side * mask).sum() / mask.sum()
