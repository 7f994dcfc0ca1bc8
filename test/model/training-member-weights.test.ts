// Members' weights fitted on validation (ensemble.py --fit-weights, train.sh FIT_WEIGHTS; 3.15.0): the
// share of a 0.05 grid whose calibrated log loss on the validation conversations is lowest, scored as
// the contract aggregates (the max over a conversation's segments of the weighted sum); each member's
// last harm and side layers are then scaled by M x its weight, so the plain mean the graph has always
// traced is the weighted mean, node for node.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';

const hasTorch = spawnSync(TRAINING_PYTHON, ['-c', 'import torch, onnx'], { stdio: 'ignore' }).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'member-weights-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each case starts Python and torch (seconds alone); beside a training run a case took up to a minute.
function python<T>(script: string): T {
  const out = execFileSync(TRAINING_PYTHON, ['-W', 'ignore', '-c', `import json, sys, torch\nsys.path.insert(0, 'scripts/train')\n${script}`], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1) as string) as T;
}

describe.skipIf(!hasTorch)('members weighed (model.py weighed, calibration.py fit_member_weights)', () => {
  it('scales a member\'s harm logit, per-turn harm logits and side scores alike, and leaves the rest of it as it was', () => {
    const r = python<{ harm: number; turns: number; sides: number; gru: boolean; original: number }>(`
from model import ConversationRisk
torch.manual_seed(1)
m = ConversationRisk(50, emb=8, hidden=12).eval()
ids = torch.randint(1, 50, (2, 5, 4)); spk = torch.tensor([[1, 2, 1, 2, 1], [2, 1, 2, 0, 0]]); ages = torch.rand(2, 8)
w = m.weighed(0.6)
with torch.no_grad():
    a, b = m.heads(ids, spk, ages), w.heads(ids, spk, ages)
gap = lambda i: float((b[i] - 0.6 * a[i]).abs().max())
print(json.dumps({"harm": gap(0), "sides": max(gap(1), gap(2)), "turns": gap(3), "gru": bool(torch.equal(m.gru.weight_hh_l0, w.gru.weight_hh_l0)),
                  "original": float((m.heads(ids, spk, ages)[0] - a[0]).abs().max())}))`);
    expect(r.harm).toBeLessThan(1e-5);
    expect(r.sides).toBeLessThan(1e-5);
    expect(r.turns).toBeLessThan(1e-5);
    expect(r.gru).toBe(true);
    expect(r.original).toBe(0);
  }, 120_000);

  it('makes the plain mean of members weighed by M x w their w-weighted mean, in the same ONNX graph node for node', () => {
    const r = python<{ gap: number; speakers: number; nodes: boolean; inputs: boolean }>(`
import onnx
from model import ConversationRisk, Ensemble
from onnx_export import export_contract_onnx
torch.manual_seed(2)
m1, m2 = ConversationRisk(50, emb=8, hidden=12).eval(), ConversationRisk(50, emb=8, hidden=12, blind_reading=True).eval()
ids = torch.randint(1, 50, (3, 6, 4)); spk = torch.randint(1, 3, (3, 6)); ages = torch.rand(3, 8)
plain, weighed = Ensemble([m1, m2]).eval(), Ensemble([m1.weighed(2 * 0.7), m2.weighed(2 * 0.3)]).eval()
with torch.no_grad():
    h, s, _ = weighed(ids, spk, ages)
    (h1, a1, b1, _), (h2, a2, b2, _) = m1.heads(ids, spk, ages), m2.heads(ids, spk, ages)
from model import speaker_logits
want_h = 0.7 * h1 + 0.3 * h2
want_s = speaker_logits(want_h, 0.7 * a1 + 0.3 * a2, 0.7 * b1 + 0.3 * b2)
export_contract_onnx(plain, "${dir}/plain.onnx", 50); export_contract_onnx(weighed, "${dir}/weighed.onnx", 50)
g = lambda p: onnx.load(p).graph
ops = lambda p: [(n.op_type, list(n.input), list(n.output)) for n in g(p).node]
print(json.dumps({"gap": float((h - want_h).abs().max()), "speakers": float((s - want_s).abs().max()),
                  "nodes": ops("${dir}/plain.onnx") == ops("${dir}/weighed.onnx"),
                  "inputs": [i.name for i in g("${dir}/plain.onnx").initializer] == [i.name for i in g("${dir}/weighed.onnx").initializer]}))`);
    expect(r.gap).toBeLessThan(1e-5);
    expect(r.speakers).toBeLessThan(1e-5);
    expect(r.nodes).toBe(true);
    expect(r.inputs).toBe(true);
  }, 120_000);

  it('gives the weight to the member whose logits tell the classes apart, whichever place it holds, the same share every time, and every member a share', () => {
    const r = python<{ first: number[]; second: number[]; again: number[]; grid: number; sums: boolean }>(`
from calibration import fit_member_weights, weight_grid
g = torch.Generator().manual_seed(3)
y = (torch.rand(400, generator=g) < 0.3).long()
owner = torch.arange(400).repeat_interleave(2)  # two segments per conversation
yy = y.repeat_interleave(2).float()
good = 3 * (2 * yy - 1) + torch.randn(800, generator=g)
noise = 3 * torch.randn(800, generator=g)
first = fit_member_weights(torch.stack([good, noise]), owner, 400, y)
second = fit_member_weights(torch.stack([noise, good]), owner, 400, y)
again = fit_member_weights(torch.stack([good, noise]), owner, 400, y)
grid = weight_grid(3, 0.05)
print(json.dumps({"first": list(first[0]), "second": list(second[0]), "again": list(again[0]), "grid": len(grid),
                  "sums": all(abs(sum(w) - 1) < 1e-9 and min(w) >= 0.05 - 1e-9 for w in grid)}))`);
    expect(r.first[0]).toBeGreaterThanOrEqual(0.8);
    expect(r.second).toEqual([...r.first].reverse());
    expect(r.again).toEqual(r.first);
    // Three members' shares in twentieths, each member keeping at least one (a member weighed 0 would be
    // dead weight in the graph): 19 x 18 / 2 shares, each summing to 1.
    expect(r.grid).toBe(171);
    expect(r.sums).toBe(true);
  }, 120_000);

  it('reports for its share the calibrated loss of the weighed ensemble itself, aggregated as the contract aggregates (max over segments)', () => {
    const r = python<{ weights: number[]; fitted: number; ensemble: number }>(`
import torch.nn.functional as F
from calibration import fit_member_weights, fit_temperature
from losses import aggregate
from model import ConversationRisk, Ensemble
torch.manual_seed(4)
members = [ConversationRisk(50, emb=8, hidden=12).eval(), ConversationRisk(50, emb=8, hidden=12, blind_reading=True).eval()]
ids = torch.randint(1, 50, (60, 5, 4)); spk = torch.randint(1, 3, (60, 5)); ages = torch.rand(60, 8)
owner = torch.arange(20).repeat_interleave(3)  # three segments per conversation
y = (torch.arange(20) % 3 == 0).long()
with torch.no_grad():
    seg = torch.stack([m.heads(ids, spk, ages)[0] for m in members])
    w, loss = fit_member_weights(seg, owner, 20, y)
    h, s, _ = Ensemble([m.weighed(2 * x) for m, x in zip(members, w)]).eval()(ids, spk, ages)
conv, _ = aggregate(h, s, owner, 20)
t2, b2 = fit_temperature(conv, y)
print(json.dumps({"weights": list(w), "fitted": loss, "ensemble": float(F.binary_cross_entropy_with_logits(conv / t2 + b2, y.float()))}))`);
    expect(r.weights[0]! + r.weights[1]!).toBeCloseTo(1, 9);
    expect(r.ensemble).toBeCloseTo(r.fitted, 4);
  }, 120_000);

  it('fits members taken from a weighed package as the members they were, and weighs them again to the same bytes (ensemble.py weigh_members)', () => {
    // rebuild_members.py gives such a member its package's factor (heads_scaled_by = M x weight); its
    // ratio is then exactly 1, so train.sh --member-from writes a fitted package again byte for byte.
    const r = python<{ first: number[]; again: number[]; same: boolean; changed: boolean }>(`
import random
from ensemble import weigh_members
from model import ConversationRisk
torch.manual_seed(5); random.seed(5)
members = [ConversationRisk(50, emb=8, hidden=12).eval(), ConversationRisk(50, emb=8, hidden=12, blind_reading=True).eval()]
convs = [{"segments": [([[random.randint(1, 49) for _ in range(4)] for _ in range(5)], [1 + t % 2 for t in range(5)])],
          "ages": [0.0] * 8, "label": int(k % 3 == 0)} for k in range(80)]
first, _, weighed = weigh_members(members, [1.0, 1.0], convs)
scales = [2 * w for w in first]
again, _, rejoined = weigh_members(weighed, scales, convs)
print(json.dumps({"first": list(first), "again": list(again),
                  "same": all(torch.equal(a, b) for x, y in zip(weighed, rejoined) for a, b in zip(x.state_dict().values(), y.state_dict().values())),
                  "changed": not all(torch.equal(a, b) for x, y in zip(members, weighed) for a, b in zip(x.state_dict().values(), y.state_dict().values()))}))`);
    expect(r.again).toEqual(r.first);
    expect(r.same).toBe(true);
    // The first fit did weigh them (a share other than the even one scales both members' heads).
    expect(r.changed || r.first[0] === 0.5).toBe(true);
  }, 120_000);
});
