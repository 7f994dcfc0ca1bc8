// Builds the small contract-satisfying model used by tests until a trained model ships:
// a WordPiece tokenizer.json (Node tokenizers binding), model.onnx (build-contract-model.py, torch),
// and manifest.json with SHA-256 hashes. Its scores are meaningless but real (run by onnxruntime).
//
// Usage: node scripts/model/build-contract-model.ts [outDir]   (default test/fixtures/contract-model)
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer, WordPiece, bertNormalizer, bertPreTokenizer, wordPieceDecoder } from 'tokenizers';
import { CONTRACT } from '../../src/scoring/model-package.ts';
import { TRAINING_PYTHON } from '../train/python.ts';
import type { ModelManifest } from '../../src/scoring/types.ts';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = resolve(process.argv[2] ?? join(here, '../../test/fixtures/contract-model'));
mkdirSync(outDir, { recursive: true });

const WORDS = `the be to of and a in that have i it for not on with he as you do at this but his by from they we
say her she or an will my one all would there their what so up out if about who get which go me when make can
like time no just him know take people into year your good some could them see other than then now look only
come its over think also back after use two how our work first well way even new want because any these give
day most us is are was were am been has had did does hi hello hey yes okay ok thanks thank please sorry love
school home mom dad parents friend friends game games play music movie book read watch talk chat send photo
pic picture secret meet alone old age young tell nobody cool fun nice pretty cute sweet baby girl boy kid
where live phone number address snap camera video call tonight tomorrow today weekend party car drive ride`.split(/\s+/);
const CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789.,!?\'"-:;()/@#&*+=_';

const vocab: Record<string, number> = {};
for (const t of ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']) vocab[t] = Object.keys(vocab).length;
for (const c of CHARS) vocab[c] = Object.keys(vocab).length;
for (const c of CHARS) vocab[`##${c}`] = Object.keys(vocab).length;
for (const w of WORDS) if (w !== '' && !(w in vocab)) vocab[w] = Object.keys(vocab).length;

const tokenizer = new Tokenizer(WordPiece.init(vocab, { unkToken: '[UNK]' }));
tokenizer.setNormalizer(bertNormalizer({ lowercase: true }));
tokenizer.setPreTokenizer(bertPreTokenizer());
tokenizer.setDecoder(wordPieceDecoder());
tokenizer.save(join(outDir, 'tokenizer.json'));
const vocabSize = Object.keys(vocab).length;

execFileSync(TRAINING_PYTHON, [join(here, 'build-contract-model.py'), join(outDir, 'model.onnx'), String(vocabSize)], { stdio: 'inherit' });

function fileEntry(name: string): { sha256: string; bytes: number } {
  const data = readFileSync(join(outDir, name));
  return { sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length };
}

const manifest: ModelManifest = {
  ...CONTRACT,
  name: 'contract-fixture',
  version: '0.0.1',
  created: new Date(0).toISOString(),
  files: { 'model.onnx': fileEntry('model.onnx'), 'tokenizer.json': fileEntry('tokenizer.json') },
  segment: { max_turns: 64, max_tokens_per_turn: 32, max_tokens_per_flat_piece: 8 },
  age_features: { size: 8, description: 'see docs/model-contract.md' },
  calibration: { method: 'temperature', temperature: 1.0, bias: 0.0 },
  aggregation: { method: 'max-harm, harm-weighted-speaker' },
  training_data: { summary: 'none: random weights; a test fixture that satisfies the contract, not a classifier' },
  metrics: {},
};
writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`contract model written to ${outDir} (vocab ${vocabSize})`);
