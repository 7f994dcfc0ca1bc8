// Model packages derived from a real one, for tests of how the service loads them.
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A copy of the package at `from`, in `dir`, whose tokenizer.json the fast path does not implement (a
 * whitespace pre-tokenizer), with its manifest hashing the changed file: it loads, and tokenizes
 * through the native binding.
 */
export function packageWithSlowTokenizer(from: string, dir: string): string {
  const d = join(dir, 'whitespace-tokenizer');
  cpSync(from, d, { recursive: true });
  const tokenizer = JSON.parse(readFileSync(join(d, 'tokenizer.json'), 'utf8')) as Record<string, unknown>;
  tokenizer.pre_tokenizer = { type: 'Whitespace' };
  const bytes = Buffer.from(JSON.stringify(tokenizer));
  writeFileSync(join(d, 'tokenizer.json'), bytes);
  const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8')) as { files: Record<string, unknown> };
  manifest.files['tokenizer.json'] = { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
  writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest));
  return d;
}
