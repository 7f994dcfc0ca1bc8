"""The model's figures on validation conversations: predictions aggregated as the contract says."""
import torch
import torch.nn.functional as F

from data import collate, sorted_view
from losses import aggregate
from metrics import roc_auc


def batches(convs, size=128):
    """The conversations in collated batches of `size`, each with the index of its first conversation."""
    for i in range(0, len(convs), size):
        b = convs[i: i + size]
        yield i, len(b), collate(b)


def predict(model, convs, size=128):
    model.eval()
    logits, probs = [], []
    with torch.no_grad():
        for _, n, (ids, spk, ages, owner) in batches(convs, size):
            h, s, _ = model(ids, spk, ages)
            cl, sp = aggregate(h, s, owner, n)
            logits.append(cl)
            probs.append(sp)
    return torch.cat(logits), torch.cat(probs)


def member_segment_logits(members, convs, size=128):
    """Each member's harm logit for every segment of convs: [M, S], with the conversation each segment
    belongs to [S] (calibration.py fit_member_weights weighs the members by them). No per-turn logits
    are asked for (an empty turn_rows), as a call that does not explain asks for none."""
    logits, owners, no_turns = [[] for _ in members], [], torch.empty(0, dtype=torch.long)
    with torch.no_grad():
        for first, _, (ids, spk, ages, owner) in batches(convs, size):
            for k, m in enumerate(members):
                logits[k].append(m.eval().heads(ids, spk, ages, no_turns)[0])
            owners.append(owner + first)
    return torch.stack([torch.cat(parts) for parts in logits]), torch.cat(owners)


def evaluate(model, convs):
    view = sorted_view(convs)
    logits, sp = predict(model, view)
    y = torch.tensor([c["label"] for c in view])
    spk = torch.tensor([c["speaker"] for c in view])
    harmful = (y == 1) & ~torch.tensor([c["flat"] for c in view])
    return {
        "auc": roc_auc(y.cpu().numpy(), logits.cpu().numpy()),
        "attribution": float((sp.argmax(-1)[harmful] == spk[harmful]).float().mean()) if harmful.any() else float("nan"),
        "loss": float(F.binary_cross_entropy_with_logits(logits, y.float())),
    }, logits, y
