"""Writes a tiny ONNX model that satisfies docs/model-contract.md (random weights, fixed seed).

Masked mean of token embeddings per turn, plus a speaker embedding, masked mean over turns, concatenated
with the age features, then linear heads. Every reduction is masked, so outputs do not depend on padding.
The per-turn output applies the harm head to the running mean over turns 0..t (a cumulative sum), so
its entry at a turn is what the segment cut after that turn scores, as contract version 3 requires.

Usage: .venv/bin/python build-contract-model.py OUT.onnx VOCAB_SIZE
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from onnx_export import export_contract_onnx  # noqa: E402


class ContractModel(nn.Module):
    def __init__(self, vocab_size: int, dim: int = 32):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.speakers = nn.Embedding(4, dim, padding_idx=0)  # 0 padding, user1, user2, unknown (flat text)
        self.hidden = nn.Linear(dim + 8, dim)
        self.harm = nn.Linear(dim, 1)
        self.speaker = nn.Linear(dim, 3)

    def forward(self, input_ids, speaker_ids, age_features, turn_rows):
        token_mask = (input_ids != 0).to(torch.float32).unsqueeze(-1)  # [b, t, k, 1]
        emb = self.tokens(input_ids) * token_mask
        turn = emb.sum(2) / token_mask.sum(2).clamp(min=1.0)  # [b, t, d]
        turn = turn + self.speakers(speaker_ids)
        turn_mask = (speaker_ids != 0).to(torch.float32).unsqueeze(-1)  # [b, t, 1]
        seg = (turn * turn_mask).sum(1) / turn_mask.sum(1).clamp(min=1.0)  # [b, d]
        h = torch.tanh(self.hidden(torch.cat([seg, age_features], dim=1)))
        rows_turn = (turn * turn_mask).index_select(0, turn_rows)
        rows_mask = turn_mask.index_select(0, turn_rows)
        running = torch.cumsum(rows_turn, 1) / torch.cumsum(rows_mask, 1).clamp(min=1.0)  # [r, t, d]
        ages = age_features.index_select(0, turn_rows).unsqueeze(1).expand(-1, running.shape[1], -1)
        per_turn = self.harm(torch.tanh(self.hidden(torch.cat([running, ages], dim=2)))).squeeze(2) * rows_mask.squeeze(2)
        return self.harm(h).squeeze(1), self.speaker(h), per_turn


def main() -> None:
    out, vocab_size = sys.argv[1], int(sys.argv[2])
    torch.manual_seed(1234)
    model = ContractModel(vocab_size).eval()
    with torch.no_grad():
        # Larger weights than the default init so scores spread over the bands instead of sitting at 0.5.
        model.tokens.weight.mul_(2.0)
        model.tokens.weight[0].zero_()
        model.harm.weight.mul_(6.0)
    export_contract_onnx(model, out, vocab_size, gate=False)  # the traced graph, as an operator's own may be


if __name__ == "__main__":
    main()
