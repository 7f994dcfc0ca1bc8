// Vitest global setup: every temporary file a test run makes lands in one directory, removed when the
// run ends. Tests (and the Python, helm and server processes they start) write certificates, key files,
// corpora, 32 MB request bodies and training outputs under os.tmpdir(); without this each `npm test`
// left about 40 MB and 400 directories in /tmp. TMPDIR is set before vitest forks its test workers, so
// Node's os.tmpdir(), Python's tempfile and mktemp in the scripts all read it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SCRATCH_PREFIX = 'conversation-risk-tests-';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), SCRATCH_PREFIX));
  process.env.TMPDIR = dir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // A server a test left stopping may still close a file in it: retry rather than leave the tree.
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };
}
