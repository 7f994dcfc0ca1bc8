"""Calibration: temperature and bias fitted on the validation conversations after aggregation."""
import torch
import torch.nn.functional as F

from losses import conversation_logits


def fit_temperature(logits, labels):
    """Temperature and bias minimizing NLL of sigmoid(logit / T + b) on held-out conversations."""
    log_t = torch.zeros(1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    y = labels.float()
    opt = torch.optim.LBFGS([log_t, b], lr=0.1, max_iter=200)

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(logits / log_t.exp() + b, y)
        loss.backward()
        return loss

    opt.step(closure)
    # Tiny or perfectly separated validation sets push the fit to extremes; keep it sane.
    return float(log_t.exp().clamp(0.05, 20.0)), float(b.clamp(-10.0, 10.0))


def weight_grid(members, step):
    """Every way of sharing 1 among `members` in multiples of `step`, each member keeping at least one
    step: a member weighed 0 would ship as dead weight, and could not be told its share again when taken
    from the package (ensemble.py reads a rebuilt member's scale back)."""
    units = round(1 / step)

    def shares(k, left):
        if k == 1:
            if left >= 1:
                yield (left,)
            return
        for first in range(left - (k - 1), 0, -1):
            for rest in shares(k - 1, left - first):
                yield (first,) + rest
    return [tuple(u / units for u in s) for s in shares(members, units)]


def fit_member_weights(harm_logits, owner, n, labels, step=0.05):
    """Members' weights for the ensemble's harm logit: the share of a grid over the simplex (`step`)
    whose log loss on the validation conversations, each share calibrated by its own temperature and
    bias, is lowest.
    harm_logits [M, S] are the members' segment logits and owner [S] their conversations (n of them), so
    a weighting is scored as the contract aggregates it (the max over a conversation's segments of the
    weighted sum). A grid rather than a gradient fit: the loss is flat near its minimum (3.15.0's pair:
    0.13925 at 0.65, 0.13923 at 0.70, 0.13963 at 0.75), a coarse grid leaves validation little to
    overfit, and it gives the same share from the same logits every time.
    Returns (weights, loss) of the best share; ties keep the first (most weight first)."""
    y = labels.float()
    best = None
    for w in weight_grid(harm_logits.shape[0], step):
        conv = conversation_logits((torch.tensor(w).unsqueeze(-1) * harm_logits).sum(0), owner, n)
        t, b = fit_temperature(conv, labels)
        loss = float(F.binary_cross_entropy_with_logits(conv / t + b, y))
        if best is None or loss < best[1]:
            best = (w, loss)
    return best
