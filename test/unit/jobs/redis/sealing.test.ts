// Queued conversations are sealed with AES-256-GCM before they reach Redis: unreadable without the
// key, bound to their job and position, and any change to the stored bytes is detected.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../../../src/jobs/redis/sealing.ts';

const request = { conversation: 'user1: MARKER-sealed-text\nuser2: reply', age_a: '35', age_b: '13', explain: true };

describe('sealing queued conversations (AES-256-GCM)', () => {
  const key = randomBytes(32);
  const sealer = new Sealer(key);

  it('round-trips the request under the same key and context, and the sealed form holds no text', () => {
    const sealed = sealer.seal(request, 'job-1:0');
    expect(sealed).not.toContain('MARKER');
    expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain('MARKER');
    expect(sealer.open(sealed, 'job-1:0')).toEqual(request);
  });

  it('uses a fresh IV every time: the same request seals differently', () => {
    expect(sealer.seal(request, 'job-1:0')).not.toBe(sealer.seal(request, 'job-1:0'));
  });

  it('refuses another context (job or position), another key, and altered bytes', () => {
    const sealed = sealer.seal(request, 'job-1:0');
    expect(() => sealer.open(sealed, 'job-1:1')).toThrow();
    expect(() => sealer.open(sealed, 'job-2:0')).toThrow();
    expect(() => new Sealer(randomBytes(32)).open(sealed, 'job-1:0')).toThrow();
    const raw = Buffer.from(sealed, 'base64');
    raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
    expect(() => sealer.open(raw.toString('base64'), 'job-1:0')).toThrow();
    expect(() => sealer.open('c2hvcnQ=', 'job-1:0')).toThrow(/too short/);
  });

  it('seals any text the same way (a webhook URL): bound to its context, and never readable as a URL', () => {
    const url = 'https://hooks.example/cb?token=MARKER-url';
    const sealed = sealer.sealText(url, 'job-1:webhook_url');
    expect(sealed).not.toContain(':');
    expect(() => new URL(sealed)).toThrow();
    expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain('MARKER');
    expect(sealer.openText(sealed, 'job-1:webhook_url')).toBe(url);
    expect(() => sealer.openText(sealed, 'job-2:webhook_url')).toThrow();
  });

  it('needs a 32-byte key', () => {
    expect(() => new Sealer(randomBytes(16))).toThrow(/32-byte/);
  });
});
