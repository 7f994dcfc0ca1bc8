"""The conversation-risk network (docs/model-contract.md inputs and outputs).

turn encoder: token embedding, masked mean + max pooling over the piece's tokens, projection
  + speaker embedding + age projection
turns: a unidirectional GRU over the segment's pieces. Padding turns come last, so a causal GRU's
  states at real turns never see them; every pooling below is masked. Together this makes the
  outputs independent of batch padding, as the contract requires.
heads: harm logit from the masked mean+max of the turn states; one shared head scores user1 and user2
  over each speaker's own pooled states and age features (so attribution treats both sides alike).
  The speaker logits are built so that softmax gives [p*q1, p*q2, 1-p] with p = sigmoid(harm) and
  q = softmax(side scores): 'neither' is exactly 'not harmful', so a segment the harm head flags is
  always attributed to one side instead of a separate 'neither' head disagreeing with it.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

NEG = -1e4


def masked_mean_max(x, mask):
    """x: [..., N, D], mask: [..., N] (float 0/1) -> [..., 2D]; all-masked rows give zeros."""
    m = mask.unsqueeze(-1)
    count = m.sum(-2).clamp(min=1.0)
    mean = (x * m).sum(-2) / count
    mx = (x * m + (1.0 - m) * NEG).max(-2).values
    any_real = (mask.sum(-1, keepdim=True) > 0).to(x.dtype)
    return torch.cat([mean, mx * any_real], -1)


class ConversationRisk(nn.Module):
    def __init__(self, vocab_size, emb=64, hidden=96, dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.turn_proj = nn.Linear(2 * emb, hidden)
        self.spk = nn.Embedding(3, hidden)
        self.age_turn = nn.Linear(8, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.harm = nn.Sequential(nn.Linear(2 * hidden + 8, hidden), nn.GELU(), nn.Linear(hidden, 1))
        self.side = nn.Sequential(nn.Linear(4 * hidden + 4, hidden), nn.GELU(), nn.Linear(hidden, 1))

    def forward(self, input_ids, speaker_ids, age_features):
        tok_mask = (input_ids != 0).to(torch.float32)  # [B, T, L]
        turn_mask = (speaker_ids != 0).to(torch.float32)  # [B, T]
        e = self.tok(input_ids)  # [B, T, L, E]
        t = masked_mean_max(e, tok_mask)  # [B, T, 2E]
        t = torch.tanh(self.turn_proj(t) + self.spk(speaker_ids) + self.age_turn(age_features).unsqueeze(1))
        t = self.drop(t)
        h, _ = self.gru(t)  # [B, T, H]
        h = self.drop(h)
        glob = masked_mean_max(h, turn_mask)  # [B, 2H]
        harm_logit = self.harm(torch.cat([glob, age_features], -1)).squeeze(-1)
        m1 = turn_mask * (speaker_ids == 1).to(torch.float32)
        m2 = turn_mask * (speaker_ids == 2).to(torch.float32)
        p1 = masked_mean_max(h, m1)
        p2 = masked_mean_max(h, m2)
        s1 = self.side(torch.cat([p1, glob, age_features[:, 0:4]], -1))
        s2 = self.side(torch.cat([p2, glob, age_features[:, 4:8]], -1))
        # log(sigmoid) and log(softmax) written with softplus, which stays finite where an exported
        # Log(Sigmoid(x)) underflows to -inf; the floor keeps every logit finite.
        h = harm_logit.clamp(-30.0, 30.0).unsqueeze(-1)
        d = s1 - s2
        log_p = -F.softplus(-h)
        sides = torch.cat([log_p - F.softplus(-d), log_p - F.softplus(d)], -1)
        speaker_logits = torch.cat([sides, -F.softplus(h)], -1).clamp(min=-60.0)
        return harm_logit, speaker_logits
