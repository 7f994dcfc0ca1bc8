// Piece dropout (train.py --piece-dropout FAMILY=P; no release so far): in training, that share of the
// named families' pieces (lines) is emptied, so a courtship, whose every line is its harm, is also
// learnt from a few of its familiar lines. Only the named families are touched, and a run that names
// none draws no random numbers for it, so the released recipes train the networks they did.
import { describe, expect, it } from 'vitest';
import { hasTorch, trainingPython } from '../helpers/training.ts';

describe.skipIf(!hasTorch)('piece dropout in training (train.py --piece-dropout, views.py piece_dropout)', () => {
  it("empties whole pieces of the named family's conversations at about the share given, and no other conversation's", () => {
    const r = trainingPython<{ emptied: number; partial: number; untouched: boolean }>(`
from views import piece_dropout
torch.manual_seed(0)
ids = torch.randint(1, 50, (3, 400, 4))
owner = torch.tensor([0, 0, 1])  # two segments of a courtship, one of another family
out = piece_dropout(ids, owner, [{"family": "courtship_child"}, {"family": "casino"}], {"courtship_child": 0.3})
zero = (out[:2] == 0)
print(json.dumps({"emptied": zero.all(-1).float().mean().item(), "partial": (zero.any(-1) & ~zero.all(-1)).sum().item(),
                  "untouched": bool(torch.equal(out[2], ids[2]))}))
`);
    expect(r.emptied).toBeGreaterThan(0.25);
    expect(r.emptied).toBeLessThan(0.35);
    expect(r.partial).toBe(0);
    expect(r.untouched).toBe(true);
  });

  it('draws no random numbers when no family is named or none is in the batch, so what follows is drawn as before', () => {
    const r = trainingPython<boolean[]>(`
from views import piece_dropout
ids, owner, convs = torch.randint(1, 50, (2, 5, 3)), torch.tensor([0, 1]), [{"family": "a"}, {"family": "b"}]
out = []
for rates in ({}, {"courtship_child": 0.3}):
    torch.manual_seed(4); same = torch.equal(piece_dropout(ids, owner, convs, rates), ids); after = torch.rand(3)
    torch.manual_seed(4); out.append(same and torch.equal(after, torch.rand(3)))
print(json.dumps(out))
`);
    expect(r).toEqual([true, true]);
  });

  it('may differ between the members of an ensemble (ensemble.py TRAINING_OPTIONS)', () => {
    expect(trainingPython<boolean>('from ensemble import TRAINING_OPTIONS\nprint(json.dumps("piece_dropout" in TRAINING_OPTIONS))')).toBe(true);
  });
});
