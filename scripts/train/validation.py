"""The model's figures on validation conversations: predictions aggregated as the contract says."""
import torch
import torch.nn.functional as F

from data import collate, sorted_view
from losses import aggregate
from metrics import roc_auc


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


def member_segment_logits(members, convs, size=128):
    """Each member's harm logit for every segment of convs: [M, S], with the conversation each segment
    belongs to [S] (calibration.py fit_member_weights weighs the members by them)."""
    logits, owners, offset = [[] for _ in members], [], 0
    with torch.no_grad():
        for i in range(0, len(convs), size):
            b = convs[i: i + size]
            ids, spk, ages, owner = collate(b)
            for k, m in enumerate(members):
                logits[k].append(m.eval().heads(ids, spk, ages)[0])
            owners.append(owner + offset)
            offset += len(b)
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
