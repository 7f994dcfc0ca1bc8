"""Calibration: temperature and bias fitted on the validation conversations after aggregation."""
import torch
import torch.nn.functional as F


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
