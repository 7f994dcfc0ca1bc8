// Label weights (train.py --harm-weight FAMILY=W and --source-weight SOURCE=W; none in a released
// recipe so far): the label loss of a named family's harmful conversations, or of every conversation
// from a named source, and of their views, counts W times. A family the network under-scores (a
// relationship under way) is pushed past the cut without weighing its benign twins; a source is
// weighed in both classes, so that its register is no cue for either.
import { describe, expect, it } from 'vitest';
import { hasTorch, trainingPython } from '../helpers/training.ts';

describe.skipIf(!hasTorch)('label weights in training (train.py --harm-weight, --source-weight)', () => {
  it("weighs only the named family's harmful conversations; its benign ones and every other family count once", () => {
    const w = trainingPython<number[]>(`
from train import label_weights, parse_weights
batch = [{"family": "courtship_child", "label": 1}, {"family": "courtship_child_excerpt_benign", "label": 0},
         {"family": "courtship_child", "label": 0}, {"family": "partners_adult", "label": 0}, {"family": "grooming_slow", "label": 1}]
print(json.dumps(label_weights(batch, parse_weights(["courtship_child=3", "grooming_slow=1.5"], "--harm-weight", "FAMILY"), {}).tolist()))
`);
    expect(w).toEqual([3, 1, 1, 1, 1.5]);
  });

  it("weighs a source's conversations in both classes, times the family's harm weight", () => {
    const w = trainingPython<number[]>(`
from train import label_weights, parse_weights
sms = "sms-spam-collection+generator"
batch = [{"family": "hosted_teen_flirting", "label": 0, "source": sms}, {"family": "hosted_grooming_slow", "label": 1, "source": sms},
         {"family": "hosted_grooming_slow", "label": 1, "source": "topical-chat+generator"}, {"family": "courtship_child", "label": 1, "source": "generator"},
         {"family": "courtship_child", "label": 1, "source": sms}]
print(json.dumps(label_weights(batch, parse_weights(["courtship_child=3"], "--harm-weight", "FAMILY"), parse_weights([sms + "=2"], "--source-weight", "SOURCE")).tolist()))
`);
    expect(w).toEqual([2, 2, 1, 3, 6]);
  });

  it('leaves the loss unweighted when no family is named, so the released recipes train what they did', () => {
    const r = trainingPython<{ weights: null; same: boolean }>(`
import torch.nn.functional as F
from train import label_weights
logits, y = torch.tensor([0.3, -1.2, 2.0]), torch.tensor([1.0, 0.0, 1.0])
w = label_weights([{"family": "a", "label": 1, "source": "b"}] * 3, {}, {})
print(json.dumps({"weights": w, "same": bool(torch.equal(F.binary_cross_entropy_with_logits(logits, y, weight=w), F.binary_cross_entropy_with_logits(logits, y)))}))
`);
    expect(r).toEqual({ weights: null, same: true });
  });

  it('refuses a weight that is not NAME=W with W above 0, naming the option', () => {
    const r = trainingPython<string[]>(`
from train import parse_weights
out = []
for spec in ("courtship_child", "=2", "courtship_child=0", "courtship_child=-1", "courtship_child=x"):
    try:
        parse_weights([spec], "--harm-weight", "FAMILY"); out.append("taken")
    except SystemExit as e:
        out.append(str(e))
print(json.dumps(out))
`);
    expect(r).toHaveLength(5);
    for (const message of r) expect(message).toMatch(/^--harm-weight is FAMILY=W with W above 0, not /);
  });

  it('may differ between the members of an ensemble (ensemble.py TRAINING_OPTIONS)', () => {
    const r = trainingPython<boolean>(`
from ensemble import TRAINING_OPTIONS
print(json.dumps({"harm_weights", "source_weights"} <= TRAINING_OPTIONS))
`);
    expect(r).toBe(true);
  });
});
