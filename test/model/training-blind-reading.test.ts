// Blind reading (train.py --blind-reading, model.py): every turn is read as flat text is, so the harm
// score cannot follow which speaker said what, only what was said and how it was cut; the speaker ids
// still choose whose turns each side's head pools, so attribution keeps following the speakers.
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasTorch = spawnSync(TRAINING_PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

/** Harm logits and side-score gaps of a seeded random network for the same pieces under several speaker labellings. */
function outputs(blind: boolean): { harm: number[][]; sides: number[][]; foldedBlind: boolean } {
  const script = `
import json, sys, torch
sys.path.insert(0, 'scripts/train')
from model import ConversationRisk
torch.manual_seed(0)
m = ConversationRisk(50, emb=8, hidden=12, blind_reading=${blind ? 'True' : 'False'}).eval()
ids = torch.randint(1, 50, (1, 5, 4))
ids[0, 4] = 0  # a padding turn
ages = torch.zeros(1, 8)
labellings = [[1, 2, 1, 2, 0], [2, 1, 2, 1, 0], [3, 3, 3, 3, 0], [1, 1, 2, 2, 0]]
harm, sides = [], []
with torch.no_grad():
    for spk in labellings:
        h, s1, s2, _ = m.heads(ids, torch.tensor([spk]), ages)
        harm.append(h.tolist()); sides.append((s1 - s2).flatten().tolist())
print(json.dumps({"harm": harm, "sides": sides, "foldedBlind": m.folded().blind_reading}))
`;
  return JSON.parse(execFileSync(TRAINING_PYTHON, ['-c', script], { encoding: 'utf8' })) as { harm: number[][]; sides: number[][]; foldedBlind: boolean };
}

describe.skipIf(!hasTorch)('blind reading', () => {
  it('scores harm the same whoever the turns are labelled as, flat text included', () => {
    const { harm, foldedBlind } = outputs(true);
    for (const h of harm.slice(1)) expect(h[0]).toBeCloseTo(harm[0]?.[0] as number, 6);
    // The exported graph is folded() from it: the flag must survive the fold.
    expect(foldedBlind).toBe(true);
  });

  it('still attributes by speaker: swapping who said what swaps the side scores', () => {
    const { sides } = outputs(true);
    expect(sides[1]?.[0]).toBeCloseTo(-(sides[0]?.[0] as number), 6);
    expect(Math.abs(sides[0]?.[0] as number)).toBeGreaterThan(1e-4);
  });

  it('is off by default: the speakers then change the harm score', () => {
    const { harm, foldedBlind } = outputs(false);
    expect(Math.abs((harm[0]?.[0] as number) - (harm[2]?.[0] as number))).toBeGreaterThan(1e-5);
    expect(foldedBlind).toBe(false);
  });

  it('may differ between the members of an ensemble, each reading with its own forward (ensemble.py)', () => {
    const script = `
import sys
sys.path.insert(0, 'scripts/train')
from ensemble import check_members, recipe_of
base = {"hyperparameters": {"seed": 7, "emb": 64, "hidden": 96, "epochs": 9}, "pretrained_vectors": True, "conversations": {"train": 10, "val": 5}}
blind = {**base, "hyperparameters": {**base["hyperparameters"], "seed": 8, "blind_reading": True}}
check_members([base, blind])
print(recipe_of(blind)["blind_reading"])
`;
    expect(execFileSync(TRAINING_PYTHON, ['-c', script], { encoding: 'utf8' }).trim()).toBe('True');
  });
});

