"""The conversation-risk network (docs/model-contract.md inputs and outputs).

token embedding: a trainable table, or (hybrid vocabulary) pretrained word vectors through a
  trained projection for the entries that have one plus a trainable table for the rest. The
  pretrained vectors stay frozen, so a word never seen in training still lands near its neighbours;
  `folded()` turns the two paths into one plain table for export, so the ONNX graph is the same.
turn encoder: masked mean + max pooling over the piece's tokens, projection
  + speaker embedding (padding, user1, user2, unknown for flat text) + age projection
turns: a unidirectional GRU over the segment's pieces. Padding turns come last, so a causal GRU's
  states at real turns never see them; every pooling below is masked. Together this makes the
  outputs independent of batch padding, as the contract requires.
heads: harm logit from the masked mean+max of the turn states, and the same head on the running
  mean+max after every turn (turn_harm_logits: what the segment would score had it ended there; the
  service reads it only when asked to explain, and onnxruntime then runs those nodes); one shared head scores user1 and user2
  over each speaker's own pooled states and age features (so attribution treats both sides alike).
  The speaker logits are built so that softmax gives [p*q1, p*q2, 1-p] with p = sigmoid(harm) and
  q = softmax(side scores): 'neither' is exactly 'not harmful', so a segment the harm head flags is
  always attributed to one side instead of a separate 'neither' head disagreeing with it.
side ages (train.py --side-ages, since 3.12.0 in the member that reads the speakers): a head reads each side's pooled states
  and is taught whether that side is a minor, from the generator's true ages, stated in the request or
  not. With harm_reads_sides the harm head also reads the lower and the higher of the two sides'
  logits (symmetric, so mirroring the speakers changes nothing): an adult courting a child, two
  teenagers and two adults say the same affection, and who is which is what tells them apart.
ensemble: members trained alike from different seeds, exported as one graph with the same inputs and
  outputs (the mean of their heads, composed as above).
"""
import copy

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


def running_mean_max(x, mask, max_turns):
    """x: [B, T, D], mask: [B, T] -> [B, T, 2D]: mean and max of x over turns 0..t at every t.

    The max is a Hillis-Steele prefix scan (ceil(log2(max_turns)) shifted maxima) because ONNX has no
    cumulative max; it is exact for segments of up to max_turns turns. Padding turns come last, so the
    rows of real turns never include them."""
    m = mask.unsqueeze(-1)
    count = torch.cumsum(m, 1).clamp(min=1.0)
    mean = torch.cumsum(x * m, 1) / count
    mx = x * m + (1.0 - m) * NEG
    turns = x.shape[1]
    shift = 1
    while shift < max_turns:
        earlier = F.pad(mx, (0, 0, shift, 0), value=NEG)[:, :turns, :]
        mx = torch.maximum(mx, earlier)
        shift *= 2
    return torch.cat([mean, mx], -1)


def min_max(a, b):
    """[..] and [..] -> [.., 2]: the lower and the higher of two sides' values, the same whichever side is which."""
    return torch.stack([torch.minimum(a, b), torch.maximum(a, b)], -1)


def side_pools(h, turn_mask, speaker_ids):
    """Each side's turn masks and pooled states: user1's and user2's [B, T] masks, then [B, 2H] pools."""
    m1 = turn_mask * (speaker_ids == 1).to(torch.float32)
    m2 = turn_mask * (speaker_ids == 2).to(torch.float32)
    return m1, m2, masked_mean_max(h, m1), masked_mean_max(h, m2)


SPEAKER_IDS = 4  # 0 padding, 1 user1, 2 user2, 3 unknown (flat text): contract version 2


class ConversationRisk(nn.Module):
    def __init__(self, vocab_size, emb=64, hidden=96, dropout=0.1, pretrained=None, pretrained_residual=False, max_turns=64,
                 blind_reading=False, side_ages=False, harm_reads_sides=False):
        """pretrained: [vocab_size, d] float tensor, zero rows where an entry has no vector.
        blind_reading: the turns are read as flat text is (every real turn's speaker embedding is the
        unknown speaker's), so the harm score cannot follow who said what, only what was said and how
        it was cut; the speaker ids still choose whose turns each side's head pools.
        side_ages: a head that tells from each side's pooled states whether that side is a minor (taught
        by train.py --side-ages); harm_reads_sides feeds its two logits to the harm head, which a blind
        member may not have (its harm score must not follow who said what)."""
        super().__init__()
        if harm_reads_sides and not side_ages:
            raise ValueError("harm_reads_sides reads the side-age head: it needs side_ages")
        if harm_reads_sides and blind_reading:
            raise ValueError("a blind member's harm score may not read the sides (harm_reads_sides)")
        self.max_turns = max_turns
        self.blind_reading = blind_reading
        self.side_ages = side_ages
        self.harm_reads_sides = harm_reads_sides
        self.tok = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.pretrained = pretrained is not None
        if self.pretrained:
            has = (pretrained.abs().sum(-1, keepdim=True) > 0).to(torch.float32)
            self.register_buffer("pre", pretrained.to(torch.float32), persistent=False)
            # Which rows learn their own vector: all but the pretrained ones, unless the residual is on.
            self.register_buffer("own", torch.ones_like(has) if pretrained_residual else 1.0 - has, persistent=False)
            self.register_buffer("has_pre", has, persistent=False)
            self.pre_proj = nn.Linear(pretrained.shape[1], emb)
            with torch.no_grad():
                self.tok.weight.mul_(0.3).mul_(1.0 - has)
        self.turn_proj = nn.Linear(2 * emb, hidden)
        self.spk = nn.Embedding(SPEAKER_IDS, hidden)
        self.age_turn = nn.Linear(8, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.harm = nn.Sequential(nn.Linear(2 * hidden + 8 + (2 if harm_reads_sides else 0), hidden), nn.GELU(), nn.Linear(hidden, 1))
        self.side = nn.Sequential(nn.Linear(4 * hidden + 4, hidden), nn.GELU(), nn.Linear(hidden, 1))
        # Made last, so that a model without it draws every other initial weight as before.
        if side_ages:
            self.side_age = nn.Linear(2 * hidden, 1)

    def table(self):
        """The embedding of every vocabulary entry, as one [vocab, emb] matrix."""
        if not self.pretrained:
            return self.tok.weight
        return self.tok.weight * self.own + self.has_pre * self.pre_proj(self.pre)

    def folded(self, half_table=False):
        """A plain model with the same outputs whose embedding is one table (what ONNX exports).
        half_table stores that table in float16, read back as float32: it is almost all of the file,
        and its rounding (2^-11 relative) moves outputs by about 1e-3, well below what seeds move."""
        plain = ConversationRisk(self.tok.num_embeddings, self.tok.embedding_dim, self.turn_proj.out_features, max_turns=self.max_turns,
                                 blind_reading=self.blind_reading, side_ages=self.side_ages, harm_reads_sides=self.harm_reads_sides)
        state = {k: v for k, v in self.state_dict().items() if not k.startswith("pre_proj.")}
        with torch.no_grad():
            state["tok.weight"] = self.table().detach().clone()
        plain.load_state_dict(state)
        if half_table:
            plain.tok.half()
        return plain.eval()

    def weighed(self, factor):
        """The same network with its harm logit, per-turn harm logits and side scores each `factor` times
        what they were: the last layer of the harm and side heads scaled. An ensemble's mean of members
        weighed by M x w_k is the w-weighted mean of the members (ensemble.py --fit-weights), in the graph
        the plain mean traces, node for node."""
        out = copy.deepcopy(self)
        with torch.no_grad():
            for last in (out.harm[2], out.side[2]):
                last.weight.mul_(factor)
                last.bias.mul_(factor)
        return out.eval()

    def pooled_tokens(self, input_ids, tok_mask):
        """Each piece's token embeddings, masked mean + max: [B, T, L] ids -> [B, T, 2E]."""
        e = self.tok(input_ids) if not self.pretrained else F.embedding(input_ids, self.table())  # [B, T, L, E]
        if e.dtype != torch.float32:  # a float16 table (folded(half_table=True)); no node otherwise
            e = e.float()
        return masked_mean_max(e, tok_mask)

    def piece_content(self, input_ids):
        """What each piece says, before who said it and the ages: [B, T, L] ids -> [B, T, H]. The
        teacher's distillation (losses.py distill_loss) reads it; heads adds the speaker and ages."""
        return self.turn_proj(self.pooled_tokens(input_ids, (input_ids != 0).to(torch.float32)))

    def heads(self, input_ids, speaker_ids, age_features, turn_rows=None):
        """The raw heads: harm logit [B], side scores of user1 and of user2 [B, 1] each, per-turn harm logits [R, T].
        With side_ages, `self.side_age_out` keeps each segment's two side-age logits and whether each
        side spoke in it ([B] each), for train.py's loss."""
        tok_mask = (input_ids != 0).to(torch.float32)  # [B, T, L]
        turn_mask = (speaker_ids != 0).to(torch.float32)  # [B, T]
        t = self.pooled_tokens(input_ids, tok_mask)  # [B, T, 2E]
        read_as = speaker_ids.clamp(max=1) * 3 if self.blind_reading else speaker_ids  # padding stays 0
        t = torch.tanh(self.turn_proj(t) + self.spk(read_as) + self.age_turn(age_features).unsqueeze(1))
        t = self.drop(t)
        h, _ = self.gru(t)  # [B, T, H]
        h = self.drop(h)
        glob = masked_mean_max(h, turn_mask)  # [B, 2H]
        # Without side ages the side pools come after the harm head, as the released graphs trace them
        # (node order is part of model.onnx's bytes, which npm run train reproduces).
        sides = side_pools(h, turn_mask, speaker_ids) if self.side_ages else None
        harm_in = [glob, age_features]
        if sides is not None:
            m1, m2, p1, p2 = sides
            spoke1 = (m1.sum(-1) > 0).to(torch.float32)
            spoke2 = (m2.sum(-1) > 0).to(torch.float32)
            a1 = self.side_age(p1).squeeze(-1)
            a2 = self.side_age(p2).squeeze(-1)
            self.side_age_out = (a1, a2, spoke1, spoke2)
            if self.harm_reads_sides:
                # A side that has not spoken reads 0, the logit of an even chance.
                harm_in.append(min_max(a1 * spoke1, a2 * spoke2))
        harm_logit = self.harm(torch.cat(harm_in, -1)).squeeze(-1)
        if turn_rows is None:
            turn_rows = torch.arange(h.shape[0])
        rows_mask = turn_mask.index_select(0, turn_rows)
        h_rows = h.index_select(0, turn_rows)
        running = running_mean_max(h_rows, rows_mask, self.max_turns)  # [R, T, 2H]
        ages_t = age_features.index_select(0, turn_rows).unsqueeze(1).expand(-1, running.shape[1], -1)
        running_in = [running, ages_t]
        if self.harm_reads_sides:
            # Each side's logit from its own turns so far, so the last real turn's score is the segment's.
            sides_t = []
            for m in (m1, m2):
                mr = m.index_select(0, turn_rows)
                spoke = (torch.cumsum(mr, 1) > 0).to(torch.float32)  # [R, T]
                pooled = running_mean_max(h_rows, mr, self.max_turns) * spoke.unsqueeze(-1)
                sides_t.append(self.side_age(pooled).squeeze(-1) * spoke)
            running_in.append(min_max(sides_t[0], sides_t[1]))
        turn_harm_logits = self.harm(torch.cat(running_in, -1)).squeeze(-1) * rows_mask
        if sides is None:
            m1, m2, p1, p2 = side_pools(h, turn_mask, speaker_ids)
        s1 = self.side(torch.cat([p1, glob, age_features[:, 0:4]], -1))
        s2 = self.side(torch.cat([p2, glob, age_features[:, 4:8]], -1))
        return harm_logit, s1, s2, turn_harm_logits

    def forward(self, input_ids, speaker_ids, age_features, turn_rows=None):
        """turn_rows: int64 [R], the batch rows whose per-turn logits are wanted (all when None). An
        empty list makes the per-turn path free, so a call that does not explain costs what it did."""
        harm_logit, s1, s2, turn_harm_logits = self.heads(input_ids, speaker_ids, age_features, turn_rows)
        return harm_logit, speaker_logits(harm_logit, s1, s2), turn_harm_logits


def speaker_logits(harm_logit, s1, s2):
    """[B] harm logit and [B, 1] side scores of user1 and user2 -> [B, 3] logits whose softmax is
    [p*q1, p*q2, 1-p]. log(sigmoid) and log(softmax) are written with softplus, which stays finite
    where an exported Log(Sigmoid(x)) underflows to -inf; the floor keeps every logit finite."""
    h = harm_logit.clamp(-30.0, 30.0).unsqueeze(-1)
    d = s1 - s2
    log_p = -F.softplus(-h)
    sides = torch.cat([log_p - F.softplus(-d), log_p - F.softplus(d)], -1)
    return torch.cat([sides, -F.softplus(h)], -1).clamp(min=-60.0)


class Ensemble(nn.Module):
    """Members trained alike from different seeds, read as one model with the contract's outputs: the
    mean of their harm logits (and per-turn logits) and of their side scores, composed as one member
    composes its own. Averaging logits rather than probabilities keeps one temperature and bias
    calibrating the whole, and the running score stays causal since every member's is."""

    def __init__(self, members):
        super().__init__()
        self.members = nn.ModuleList(members)

    def forward(self, input_ids, speaker_ids, age_features, turn_rows=None):
        outs = [m.heads(input_ids, speaker_ids, age_features, turn_rows) for m in self.members]
        harm_logit, s1, s2, turn_harm_logits = (torch.stack(o).mean(0) for o in zip(*outs))
        return harm_logit, speaker_logits(harm_logit, s1, s2), turn_harm_logits
