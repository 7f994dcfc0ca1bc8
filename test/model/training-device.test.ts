// Where the training loop runs (train.py --device): the CPU for every release, which npm run train
// reproduces byte for byte; a GPU for previews only (docs/training.md, "Previews on a GPU"). The data's
// tensors follow torch's default device, so one switch moves the whole loop; a member trained off the
// CPU says so in its training.json, and one trained on it records nothing new.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { TRAINING_PYTHON } from '../../scripts/train/python.ts';
import { hasTorch, trainingPython } from '../helpers/training.ts';

describe.skipIf(!hasTorch)('the training device (train.py --device)', () => {
  it("makes the batches, the running-harm targets and the vectors on torch's default device, not always on the CPU", () => {
    // 'meta' stands in for a GPU: a device that is not the CPU, present on every machine.
    const devices = trainingPython<string[]>(`
import os, tempfile
import numpy as np
from data import collate, load_pretrained
from losses import onset_targets
d = tempfile.mkdtemp()
np.ones((3, 2), dtype="<f4").tofile(os.path.join(d, "v.f32"))
json.dump({"rows": 3, "dimensions": 2, "covered": 3}, open(os.path.join(d, "v.f32.json"), "w"))
conv = {"ages": [0.0] * 8, "segments": [([[1, 2], [2]], [1, 2])], "label": 1, "onset": 1}
torch.set_default_device("meta")
ids, spk, ages, owner = collate([conv])
target, mask = onset_targets([conv], 4)
vectors, _ = load_pretrained(os.path.join(d, "v.f32"), 3)
print(json.dumps(sorted({str(t.device) for t in (ids, spk, ages, owner, target, mask, vectors)})))
`);
    expect(devices).toEqual(['meta']);
  });

  it.skipIf(spawnSync(TRAINING_PYTHON, ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)']).status === 0)(
    'refuses --device cuda where torch sees no GPU, before reading any data',
    () => {
      const r = spawnSync(TRAINING_PYTHON, ['-W', 'ignore', 'scripts/train/train.py', '--segments', '/nonexistent/segments.jsonl', '--tokenizer', '/nonexistent/tokenizer.json', '--out', '/nonexistent/out', '--device', 'cuda'], { encoding: 'utf8' });
      expect(r.status).not.toBe(0);
      expect(r.stderr.trim().split('\n').at(-1)).toBe('--device cuda: torch sees no GPU here');
    },
  );

  it('lets a preview member join CPU-trained ones: the device is a training option (ensemble.py TRAINING_OPTIONS)', () => {
    expect(trainingPython<boolean>(`
from ensemble import TRAINING_OPTIONS
print(json.dumps("device" in TRAINING_OPTIONS))
`)).toBe(true);
  });
});
