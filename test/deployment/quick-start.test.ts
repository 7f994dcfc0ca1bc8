// The README's quick start as a new machine runs it (issue 33, item 16): `npm ci` without npm's
// "Unknown project config" warning and without onnxruntime-node's CUDA download, the service started
// by a Node that can run it, and examples that name files the documented setup makes.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

/** key=value lines of an npmrc file (comments and blank lines left out). */
function npmrcEntries(text: string): [string, string][] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'))
    .map((l) => {
      const i = l.indexOf('=');
      return [l.slice(0, i).trim(), l.slice(i + 1).trim()];
    });
}

/** The fenced code blocks of a Markdown file (fences at any indentation). */
function codeBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  let open: string[] | undefined;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      if (open) blocks.push(open.join('\n'));
      open = open ? undefined : [];
    } else {
      open?.push(line);
    }
  }
  return blocks;
}

describe('.npmrc', () => {
  it('holds only settings npm knows (npm 11 warns on every command about any other, and says they will stop working)', () => {
    // npm's own list of settings: every definition, read where no project or user npmrc adds any.
    const empty = mkdtempSync(path.join(tmpdir(), 'cr-npmrc-'));
    try {
      const all = execFileSync(
        'npm',
        ['config', 'ls', '-l', '--json', '--userconfig', path.join(empty, 'user'), '--globalconfig', path.join(empty, 'global')],
        { cwd: empty, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const known = new Set(Object.keys(JSON.parse(all) as Record<string, unknown>));
      expect(known.has('ignore-scripts')).toBe(true);
      for (const [key] of npmrcEntries(read('.npmrc'))) expect(known, `.npmrc: ${key}`).toContain(key);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    // And npm, run in the project, reads it without a warning.
    const get = spawnSync('npm', ['config', 'get', 'ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    expect(get.stderr).not.toMatch(/Unknown (project|user) config/);
    expect(get.stdout.trim()).toBe('true');
  });

  it("keeps npm ci from running onnxruntime-node's CUDA download, on the host and in the image build", () => {
    const entries = Object.fromEntries(npmrcEntries(read('.npmrc')));
    expect(entries['ignore-scripts']).toBe('true');
    // The image's npm ci reads the same file.
    const dockerfile = read('Dockerfile');
    const copy = dockerfile.indexOf('COPY package.json package-lock.json .npmrc ./');
    const ci = dockerfile.indexOf('npm ci --omit=dev --ignore-scripts');
    expect(copy).toBeGreaterThan(-1);
    expect(ci).toBeGreaterThan(copy);
    expect(read('.dockerignore')).toMatch(/^!\.npmrc$/m);
    // One way everywhere: nothing relies on the package's own switch any more.
    for (const file of ['Dockerfile', '.ci/run', 'README.md', 'docs/deployment.md']) {
      expect(read(file), file).not.toMatch(/ONNXRUNTIME_NODE_INSTALL|onnxruntime-node-install/);
    }
  });
});

describe("the README's commands", () => {
  it('never start a .ts file with the machine\'s own node (Node 20 cannot run it): npm start or node_modules/.bin/node', () => {
    const blocks = codeBlocks(read('README.md'));
    expect(blocks.join('\n')).toContain('npm start');
    for (const block of blocks) {
      for (const line of block.split('\n')) {
        expect(line, line).not.toMatch(/(^|[^/\w])node +(--\S+ +)*\S+\.ts\b/);
      }
    }
  });

  it('trust only certificate files that exist or that the documented setup makes', () => {
    // compose/init-secrets.sh writes secrets/tls.crt beside itself.
    const made = new Set<string>();
    for (const m of read('compose/init-secrets.sh').matchAll(/-out (secrets\/\S+)/g)) made.add(`compose/${m[1]}`);
    expect(made).toContain('compose/secrets/tls.crt');
    for (const file of ['README.md', 'docs/deployment.md']) {
      const named = [...read(file).matchAll(/--cacert[ =](\S+)/g)].map((m) => m[1] ?? '');
      for (const cert of named) {
        expect(made.has(cert) || existsSync(path.join(ROOT, cert)), `${file}: --cacert ${cert}`).toBe(true);
      }
    }
  });
});
