// Side ages (corpus.ts --side-ages, train.py --side-ages and --harm-reads-sides; off in every recipe):
// the corpus keeps each generated chat's true ages of both sides, the side-age head is taught from
// them whether each side is a minor, and the harm head may read its two logits, lower and higher, so
// that an adult courting a child is told from two teenagers or two adults by who is which.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCorpus, type CorpusOptions } from '../../scripts/data/corpus.ts';
import { exportSegments, type SegmentRow } from '../../scripts/data/export.ts';
import { buildFromCorpus } from '../../scripts/data/build-tokenizer.ts';
import type { LabeledConversation } from '../../scripts/data/record.ts';
import { hasTorch, trainingPython } from '../helpers/training.ts';

const small: CorpusOptions = { seed: 5, n: 300, real: false, synthetic: true, dataDir: '', jsonl: [], courtship: 200 };

describe('side ages in the corpus (corpus.ts --side-ages)', () => {
  const plain = buildCorpus(small);
  const kept = buildCorpus({ ...small, sideAges: true });

  it('keeps both sides of every generated chat, and changes nothing else: the same chats, draw for draw', () => {
    expect(plain.some((r) => r.side_ages !== undefined)).toBe(false);
    expect(kept.every((r) => Array.isArray(r.side_ages) && r.side_ages.length === 2)).toBe(true);
    expect(kept.map(({ side_ages: _, ...r }) => r)).toEqual(plain);
  });

  it("gives the ages the request states, where it states them as a number (age_a is user1's)", () => {
    let checked = 0;
    for (const r of kept) {
      for (const [field, side] of [['age_a', 0], ['age_b', 1]] as const) {
        const stated = r[field];
        if (stated === undefined || !/^\d+$/.test(stated)) continue;
        expect(r.side_ages?.[side], `${r.id} ${field}`).toBe(Number(stated));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('puts the minor on the child side of a harmful courtship: the predator is the adult', () => {
    const courting = kept.filter((r) => r.family === 'courtship_child' && r.label === 1 && r.predator !== 'neither');
    expect(courting.length).toBeGreaterThan(20);
    for (const r of courting) {
      const [a1, a2] = r.side_ages as [number, number];
      const [predator, child] = r.predator === 'user1' ? [a1, a2] : [a2, a1];
      expect(predator, r.id).toBeGreaterThanOrEqual(18);
      expect(child, r.id).toBeLessThan(18);
    }
  });

  it('travels with the tensors (export.ts), and only where the corpus kept it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'side-ages-'));
    try {
      const tokenizer = join(dir, 'tokenizer.json');
      buildFromCorpus(kept.map((r) => ({ ...r, split: 'train' })), { size: 400, minCharCount: 2, minWordCount: 2 }).save(tokenizer);
      const rows = async (records: LabeledConversation[]): Promise<SegmentRow[]> => {
        const out: SegmentRow[] = [];
        await exportSegments(records.slice(0, 40), tokenizer, { max_turns: 64, max_tokens_per_turn: 8, max_tokens_per_flat_piece: 8 }, (row) => void out.push(row));
        return out;
      };
      const withAges = await rows(kept);
      expect(withAges.every((row, i) => row.side_ages !== undefined && row.conv === withAges[i]?.conv)).toBe(true);
      const byId = new Map(kept.map((r) => [r.id, r.side_ages]));
      for (const row of withAges) expect(row.side_ages).toEqual(byId.get(row.conv));
      const without = await rows(plain);
      expect(without.some((row) => 'side_ages' in row)).toBe(false);
      expect(without.map((row) => row.input_ids)).toEqual(withAges.map((row) => row.input_ids));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!hasTorch)('side ages in training (train.py --side-ages, --harm-reads-sides)', () => {
  it('makes no side-age head unless asked, so the released recipes train the networks they did', () => {
    const r = trainingPython<{ plain: string[]; asked: string[] }>(`
from model import ConversationRisk
torch.manual_seed(0); plain = ConversationRisk(50, emb=8, hidden=12)
torch.manual_seed(0); asked = ConversationRisk(50, emb=8, hidden=12, side_ages=True)
same = all(torch.equal(v, asked.state_dict()[k]) for k, v in plain.state_dict().items())
print(json.dumps({"plain": sorted(k for k in plain.state_dict() if k.startswith("side_age")), "asked": sorted(k for k in asked.state_dict() if k.startswith("side_age")) if same else ["weights differ"]}))
`);
    expect(r.plain).toEqual([]);
    // The head is made last: every other initial weight is the one a model without it draws.
    expect(r.asked).toEqual(['side_age.bias', 'side_age.weight']);
  });

  it('refuses the harm head reading the sides without the side-age head, or in a blind member', () => {
    const r = trainingPython<string[]>(`
from model import ConversationRisk
out = []
for kw in ({"harm_reads_sides": True}, {"harm_reads_sides": True, "side_ages": True, "blind_reading": True}):
    try:
        ConversationRisk(50, emb=8, hidden=12, **kw); out.append("made")
    except ValueError as e:
        out.append(str(e))
print(json.dumps(out))
`);
    expect(r[0]).toMatch(/needs side_ages/);
    expect(r[1]).toMatch(/blind member/);
  });

  it("reads the sides so that who is which does not matter, and ends each segment's running score at its score", () => {
    const r = trainingPython<{ mirrored: number; lastTurn: number; padded: number; unread: number }>(`
from model import ConversationRisk
torch.manual_seed(1)
m = ConversationRisk(60, emb=8, hidden=12, side_ages=True, harm_reads_sides=True).eval()
with torch.no_grad():
    for p in m.side_age.parameters(): p.normal_()
ids = torch.randint(1, 60, (3, 6, 4)); spk = torch.tensor([[1, 2, 1, 2, 2, 0], [2, 2, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0]])
ids = ids * (spk != 0).unsqueeze(-1); ages = torch.randn(3, 8)
with torch.no_grad():
    h, s, th = m(ids, spk, ages)
    a1, a2, _, _ = m.side_age_out
    # The harm head's side input is symmetric: the two sides' logits swapped give the same harm.
    feats = torch.stack([torch.minimum(a1, a2), torch.maximum(a1, a2)], -1)
    swapped = torch.stack([torch.minimum(a2, a1), torch.maximum(a2, a1)], -1)
    last = (spk != 0).sum(1) - 1
    padded_ids = torch.zeros(3, 8, 5, dtype=torch.long); padded_ids[:, :6, :4] = ids
    padded_spk = torch.zeros(3, 8, dtype=torch.long); padded_spk[:, :6] = spk
    hp, _, _ = m(padded_ids, padded_spk, ages)
    # A side that never spoke (row 2 has no user2) reads 0 whatever the head says of an empty pool.
    unread = float(m.side_age_out[3][2])
print(json.dumps({"mirrored": float((feats - swapped).abs().max()), "lastTurn": float((th[torch.arange(3), last] - h).abs().max()),
                  "padded": float((hp - h).abs().max()), "unread": unread}))
`);
    expect(r.mirrored).toBe(0);
    expect(r.lastTurn).toBeLessThan(1e-5);
    expect(r.padded).toBeLessThan(1e-5);
    expect(r.unread).toBe(0);
  });

  it('may differ between the members of an ensemble, each rebuilt with its own head (ensemble.py)', () => {
    const r = trainingPython<{ recipe: Record<string, unknown>; rebuilt: boolean[] }>(`
from ensemble import check_members, recipe_of, load_member
import os, tempfile
from model import ConversationRisk
base = {"hyperparameters": {"seed": 8, "emb": 8, "hidden": 12, "epochs": 9, "blind_reading": True}, "pretrained_vectors": False, "conversations": {"train": 10, "val": 5}}
sided = {**base, "hyperparameters": {**base["hyperparameters"], "seed": 7, "blind_reading": False, "side_ages": 0.5, "harm_reads_sides": True}}
check_members([sided, base])
rebuilt = []
for info in (sided, base):
    hp = info["hyperparameters"]
    d = tempfile.mkdtemp()
    torch.save(ConversationRisk(50, emb=8, hidden=12, blind_reading=hp["blind_reading"], side_ages=hp.get("side_ages", 0) > 0, harm_reads_sides=hp.get("harm_reads_sides", False)).state_dict(), os.path.join(d, "model.pt"))
    m = load_member(d, info, 50, None, False)
    rebuilt.append(m.harm_reads_sides)
print(json.dumps({"recipe": recipe_of(sided), "rebuilt": rebuilt}))
`);
    expect(r.recipe).toMatchObject({ side_ages: 0.5, harm_reads_sides: true, blind_reading: false });
    expect(r.rebuilt).toEqual([true, false]);
  });

  it('teaches the sides that spoke and whose age is known, swapped with the speakers when mirrored', () => {
    const r = trainingPython<{ targets: number[][]; loss: number; lossUnknown: number; mirrored: boolean }>(`
from losses import side_age_loss, side_age_targets
from views import augment
convs = [{"side_ages": [34, 13], "flat": False}, {"side_ages": [15, 16], "flat": False}, {"flat": False}, {"side_ages": [30, 12], "flat": True}]
targets = side_age_targets(convs)
# Two segments of the first chat, in one of which user2 never spoke.
a1 = torch.tensor([-2.0, -2.0]); a2 = torch.tensor([3.0, 50.0])
loss = side_age_loss((a1, a2, torch.tensor([1.0, 1.0]), torch.tensor([1.0, 0.0])), targets[:1], torch.tensor([0, 0]))
expected = (torch.nn.functional.softplus(torch.tensor(-2.0)) * 2 + torch.nn.functional.softplus(torch.tensor(-3.0))) / 3
lossUnknown = side_age_loss((a1[:1], a2[:1], torch.ones(1), torch.ones(1)), targets[2:3], torch.tensor([0]))
torch.manual_seed(4)
ids = torch.ones(8, 2, 2, dtype=torch.long); spk = torch.tensor([[1, 2]] * 8); ages = torch.zeros(8, 8)
sides = torch.tensor([[1.0, 0.0]] * 8)
_, spk2, _, _, sides2 = augment(ids, spk, ages, torch.arange(8), torch.full((8,), 2), 0.0, sides)
mirrored = all((spk2[i, 0] == 2) == bool(sides2[i, 0] == 0) for i in range(8)) and bool((spk2[:, 0] == 2).any())
print(json.dumps({"targets": targets.tolist(), "loss": float(loss - expected), "lossUnknown": float(lossUnknown), "mirrored": mirrored}))
`);
    expect(r.targets).toEqual([[0, 1], [1, 1], [-1, -1], [-1, -1]]);
    expect(Math.abs(r.loss)).toBeLessThan(1e-6);
    expect(r.lossUnknown).toBe(0);
    expect(r.mirrored).toBe(true);
  });
});
