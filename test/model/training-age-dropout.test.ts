// Age dropout (train.py --age-dropout P; no release so far): in training, every number from 10 to 59 is
// emptied in that share of the conversations and of their views, so that a window is also learnt as a
// real one reads that states no age. Excerpts written by hand found 3.15.0 missing most grooming whose
// window states no age (docs/training.md, "Excerpts written by hand"). A run without it draws no
// random numbers for it, so the released recipes train the networks they did. --age-dropout-whole (run
// 112) also zeroes the chosen conversations' age fields and lets each view follow its conversation's draw.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';
import { hasTorch, trainingPython } from '../helpers/training.ts';

const TOKENIZER = join(import.meta.dirname, '../../models/conversation-risk/tokenizer.json');

describe.skipIf(!hasTorch)('age dropout in training (train.py --age-dropout, views.py age_dropout)', () => {
  it('takes the whole-number entries from 10 to 59 as ages, not single digits, larger numbers or word pieces', () => {
    const r = trainingPython<{ ages: string[]; n: number }>(`
from views import age_token_ids
vocab = json.load(open(${JSON.stringify(TOKENIZER)}))["model"]["vocab"]
ids = set(age_token_ids(${JSON.stringify(TOKENIZER)}).tolist())
words = {i: w for w, i in vocab.items()}
print(json.dumps({"ages": sorted((words[i] for i in ids), key=int), "n": len(ids)}))
`);
    expect(r.ages).toContain('14');
    expect(r.ages).toContain('32');
    expect(r.ages.every((w) => /^\d\d$/.test(w) && Number(w) >= 10 && Number(w) <= 59)).toBe(true);
    expect(r.ages).not.toContain('9');
    expect(r.ages).not.toContain('100');
    expect(r.n).toBeGreaterThan(40);
  });

  it("empties every age token of a chosen conversation, in all its segments, and nothing else; about the share given", () => {
    const r = trainingPython<{ share: number; others_kept: boolean; whole: boolean }>(`
from views import age_dropout
torch.manual_seed(0)
ages = torch.tensor([14, 32])
n = 2000
ids = torch.tensor([[[14, 5, 32, 7], [32, 8, 9, 14]]]).repeat(n, 1, 1).view(n * 2, 1, 4)[: n * 2]
owner = torch.arange(n).repeat_interleave(2)
out = age_dropout(ids.view(n * 2, 1, 4), owner, n, ages, 0.4)
emptied = (out[:, 0, 0] == 0) | (out[:, 0, 3] == 0)
per_conv = emptied.view(n, 2)
others = torch.isin(ids, ages, invert=True)
print(json.dumps({"share": per_conv[:, 0].float().mean().item(),
                  "others_kept": bool(torch.equal(out[others], ids[others])),
                  "whole": bool((per_conv[:, 0] == per_conv[:, 1]).all()) and bool((out[emptied][torch.isin(ids[emptied], ages)] == 0).all())}))
`);
    expect(r.share).toBeGreaterThan(0.35);
    expect(r.share).toBeLessThan(0.45);
    expect(r.others_kept).toBe(true);
    expect(r.whole).toBe(true);
  });

  it('draws no random numbers at rate 0, so what follows is drawn as before', () => {
    const r = trainingPython<boolean>(`
from views import age_dropout
ids, owner = torch.tensor([[[14, 5]], [[32, 6]]]), torch.tensor([0, 1])
torch.manual_seed(4); same = torch.equal(age_dropout(ids, owner, 2, None, 0.0), ids); after = torch.rand(3)
torch.manual_seed(4)
print(json.dumps(same and torch.equal(after, torch.rand(3))))
`);
    expect(r).toBe(true);
  });

  it("whole: a chosen conversation's age fields read as a request without ages (all zeros) in every segment, with its age tokens gone; the others keep both", () => {
    const r = trainingPython<{ fields: number[][]; ids: number[][] }>(`
from views import drop_ages
age_ids = torch.tensor([14, 32])
ids = torch.tensor([[[14, 5]], [[32, 6]], [[14, 7]]])
ages = torch.tensor([[1, 1, 0.14, 0.14, 1, 0, 0.32, 0.32]] * 3)
owner = torch.tensor([0, 0, 1])
out_ids, out_ages = drop_ages(ids, ages, owner, torch.tensor([True, False]), age_ids)
print(json.dumps({"fields": out_ages.tolist(), "ids": out_ids.view(3, 2).tolist()}))
`);
    expect(r.fields[0]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(r.fields[1]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(r.fields[2]!.map((v) => Math.round(v * 100) / 100)).toEqual([1, 1, 0.14, 0.14, 1, 0, 0.32, 0.32]);
    expect(r.ids).toEqual([[0, 5], [0, 6], [14, 7]]);
  });

  it("text only (run 111) empties what run 111's code emptied from the same seed: one draw of the conversations, the fields untouched", () => {
    // Run 111's age_dropout body, as it was before the whole variant was added (commit 23ea07a).
    const r = trainingPython<{ same: boolean; emptied: number; after: boolean }>(`
from views import age_dropout
age_ids = torch.tensor([14, 32])
torch.manual_seed(1); ids = torch.randint(0, 40, (50, 1, 6))
owner = torch.arange(25).repeat_interleave(2)
torch.manual_seed(9); a = age_dropout(ids, owner, 25, age_ids, 0.5); next_a = torch.rand(2)
torch.manual_seed(9)
chosen = (torch.rand(25) < 0.5)[owner]
b = ids * (~(torch.isin(ids, age_ids) & chosen.view(-1, 1, 1))).to(ids.dtype); next_b = torch.rand(2)
print(json.dumps({"same": torch.equal(a, b), "emptied": int((a != ids).sum()), "after": torch.equal(next_a, next_b)}))
`);
    expect(r.same).toBe(true);
    expect(r.emptied).toBeGreaterThan(0);
    // And it leaves the random stream where run 111's did, so the rest of a run draws the same numbers.
    expect(r.after).toBe(true);
  });

  it('refuses --age-dropout-whole without --age-dropout, whose emptying it qualifies', () => {
    const run = spawnSync(TRAINING_PYTHON, ['-W', 'ignore', 'scripts/train/train.py', '--segments', '/nonexistent', '--tokenizer', '/nonexistent', '--out', '/nonexistent', '--age-dropout-whole'], { encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('--age-dropout-whole says how --age-dropout empties ages: give --age-dropout a share');
  });

  it('may differ between the members of an ensemble, the whole variant too (ensemble.py TRAINING_OPTIONS)', () => {
    expect(trainingPython<boolean>('from ensemble import TRAINING_OPTIONS\nprint(json.dumps({"age_dropout", "age_dropout_whole"} <= TRAINING_OPTIONS))')).toBe(true);
  });
});
