// The review console in a real headless Chromium (Debian's `chromium`, driven by playwright-core with
// its executablePath) against the real app over TLS, scoring with the contract fixture model: type a
// key, score a chat (chart, first alert, evidence), a 200-chat file dropped and scored as a job
// (progress to the end, sort, filter, open a row, export CSV and JSONL), a wrong key, the rate limit
// and a degraded model, keyboard only, a narrow window; and throughout, the page's CSP, no CSP
// violation, no request to another origin, and the key nowhere but in the Authorization header.
// Screenshots of each view go to .tmp/console-screenshots/ (gitignored). Without a Chromium the suite
// is skipped with a message; .ci/run installs Debian's, so CI never skips it.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_COLUMNS } from '../../console/src/results.ts';
import { selfSignedCertificate, startListeners, type Listeners } from '../../src/http/listeners.ts';
import { CONSOLE_CSP } from '../../src/routes/console.ts';
import type { TlsMaterial } from '../../src/app.ts';
import { bearer, chat, REPO_ROOT, startTestApp, TEST_KEY, type TestApp } from '../helpers/app.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(`console browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH; .ci/run installs it)`);
}
const SCREENSHOTS = join(REPO_ROOT, '.tmp', 'console-screenshots');

/** A chat the fixture model alerts on (first alert at message 2) with evidence: see the first test. */
const ALERTING_CHAT = 'user1: hi\nuser2: hello\nuser1: how was school\nuser2: fine\nuser1: are you home alone\nuser2: yes';

/** Polls until the assertion holds, long enough for a scoring call on a busy 2-core machine. */
const eventually = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 50 });

/** The parts of a v1 explained answer the first test compares the page with. */
interface V1Answer {
  harmful_score: number;
  risk_level: string;
  predatory_user: string;
  confidence: number;
  explanation: { turn_scores: number[]; first_alert_index: number | null; evidence: Array<{ index: number }> };
}

interface Server {
  t: TestApp;
  listeners: Listeners;
  url: string;
}

async function serve(tls: TlsMaterial, env: Record<string, string>): Promise<Server> {
  const t = await startTestApp({ tls, env: { TLS_MODE: 'on', ...env } });
  const listeners = await startListeners({ app: t.app, metricsServer: undefined, config: t.config });
  return { t, listeners, url: listeners.appUrl };
}

async function stop(s: Server | undefined): Promise<void> {
  if (s === undefined) return;
  await s.listeners.close();
  await s.t.scorer.close();
}

let browser: Browser;
let main: Server;
let limited: Server;
let degraded: Server;
const contexts: BrowserContext[] = [];
/** Every request any page made, and what the pages reported. */
const requests: Array<{ url: string; authorization: string | undefined }> = [];
const problems: string[] = [];

async function newPage(viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport, acceptDownloads: true });
  contexts.push(context);
  context.on('request', (r) => requests.push({ url: r.url(), authorization: r.headers()['authorization'] }));
  const page = await context.newPage();
  page.on('console', (m) => {
    // The API's error answers the tests ask for are logged by Chromium as failed loads: expected.
    if (/^Failed to load resource: the server responded with a status of (401|403|429|503)\b/.test(m.text())) return;
    if (m.type() === 'error' || /Content Security Policy|Refused to/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return page;
}

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage });
}

/** Opens the console, checks the page's CSP, and types the key. */
async function openWithKey(page: Page, server: Server, key = TEST_KEY): Promise<void> {
  const response = await page.goto(`${server.url}/console`);
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-security-policy']).toBe(CONSOLE_CSP);
  await page.locator('#key-input').fill(key);
  await page.locator('#key-input').press('Enter');
  await eventually(() => page.locator('#key-status').textContent()).toMatch(/Key held in this tab only/);
  // The field is emptied: the key lives in the script's memory, not in the page.
  expect(await page.locator('#key-input').inputValue()).toBe('');
}

async function scoreChat(page: Page, text: string, ages: { a?: string; b?: string } = {}): Promise<void> {
  await page.locator('#chat-text').fill(text);
  await page.locator('#age-a').fill(ages.a ?? '');
  await page.locator('#age-b').fill(ages.b ?? '');
  await page.locator('#chat-score').click();
}

const noticeOf = (page: Page) => page.locator('#chat-notice');
const horizontalOverflow = async (page: Page) => Number(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'));

describe.skipIf(!haveChromium)('the review console in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const tls = await selfSignedCertificate();
    main = await serve(tls, { RATE_LIMIT_MAX: '10000' });
    limited = await serve(tls, { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000' });
    degraded = await serve(tls, { MODEL_DIR: '/nonexistent/model-dir' });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  });
  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await Promise.all([stop(main), stop(limited), stop(degraded)]);
  });

  it('type a key, score a chat: the score, band, side and confidence, the chart with its thresholds and first alert, the marked evidence', async () => {
    const answer = await main.t.app.inject({ method: 'POST', url: '/predict?explain=true', headers: bearer(), payload: { conversation: ALERTING_CHAT, age_a: '34' } });
    const expected = answer.json() as V1Answer;
    const explanation = expected.explanation;
    expect(explanation.first_alert_index).toBe(1);
    expect(explanation.evidence.length).toBeGreaterThan(0);

    const page = await newPage();
    await openWithKey(page, main);
    const call = page.waitForRequest((r) => r.url().endsWith('/predict?explain=true'));
    await scoreChat(page, ALERTING_CHAT, { a: '34' });
    expect(JSON.parse((await call).postData() ?? '{}')).toEqual({ conversation: ALERTING_CHAT, age_a: '34' });
    const result = page.locator('#chat-result');
    await result.locator('.chart').waitFor();

    const fact = (term: string) => result.locator('.fact', { has: page.locator(`dt:text-is("${term}")`) }).locator('dd');
    expect(await fact('Score').textContent()).toBe(expected.harmful_score.toFixed(3));
    expect(await fact('Band').textContent()).toBe(expected.risk_level);
    expect(await fact('Side named').textContent()).toBe(expected.predatory_user === 'neither' ? 'neither side' : expected.predatory_user);
    expect(await fact('Confidence').textContent()).toBe(expected.confidence.toFixed(3));

    // The chart: five bands named, four thresholds, the alert line, the running score, the first alert, numbered evidence.
    const chart = result.locator('svg.chart');
    expect(await chart.getAttribute('role')).toBe('img');
    expect(await chart.locator('.band-label').allTextContents()).toEqual(['Critical', 'High Risk', 'Medium Risk', 'Low Risk', 'Safe']);
    expect(await chart.locator('line.threshold').count()).toBe(4);
    expect(await chart.locator('line.alert-threshold').count()).toBe(1);
    const points = (await chart.locator('polyline.score-line').getAttribute('points'))?.split(' ') ?? [];
    expect(points).toHaveLength(explanation.turn_scores.length);
    expect(await chart.locator('.first-alert-label').textContent()).toBe('First alert: message 2');
    expect(await chart.locator('.evidence-mark').count()).toBe(explanation.evidence.length);
    expect(await chart.locator('desc').textContent()).toContain('It first goes above 0.5 at message 2');

    // The chat: one entry per turn with its running score; the first alert and each evidence message marked in words.
    const messages = result.locator('ol.chat > li');
    expect(await messages.count()).toBe(explanation.turn_scores.length);
    expect(await messages.nth(1).locator('.badge-alert').textContent()).toBe('First alert');
    expect(await result.locator('.badge-alert').count()).toBe(1);
    for (const [rank, e] of explanation.evidence.entries()) {
      expect(await messages.nth(e.index).locator('.badge-evidence').textContent()).toBe(`Evidence ${rank + 1}`);
    }
    expect(await result.locator('.badge-evidence').count()).toBe(explanation.evidence.length);
    for (const [i, score] of explanation.turn_scores.entries()) {
      expect(await messages.nth(i).locator('.running').textContent()).toBe(`running ${score.toFixed(3)}`);
    }
    expect(await messages.nth(2).locator('.msg-text').textContent()).toBe('how was school');
    // Shaded by the rise: the strongest evidence is shaded, a message after which the score fell is not.
    expect(await messages.nth(explanation.evidence[0]?.index ?? 0).getAttribute('class')).toMatch(/shade-[1-5]/);
    await shot(page, '1-one-chat');
    await page.locator('#chat-result .chart-box').screenshot({ path: join(SCREENSHOTS, '1-one-chat-chart.png') });
    await result.screenshot({ path: join(SCREENSHOTS, '1-one-chat-result.png') });

    // A /v2 messages array goes to /v2/predict with explain on.
    const v2 = page.waitForRequest((r) => r.url().endsWith('/v2/predict'));
    await scoreChat(page, JSON.stringify([{ user: 'user1', text: 'hi' }, { user: 'user2', text: 'hello' }]));
    expect(JSON.parse((await v2).postData() ?? '{}')).toEqual({ messages: [{ user: 'user1', text: 'hi' }, { user: 'user2', text: 'hello' }], explain: true });
    await eventually(() => result.locator('ol.chat > li').count()).toBe(2);
  }, 60_000);

  it('a 200-chat file: dropped, scored as a /v2 job with the progress bar to the end; sorted, filtered, a row opened, exported', async () => {
    const lines: string[] = [];
    const texts: string[] = [];
    for (let i = 0; i < 200; i++) {
      const conversation = i === 7 ? ALERTING_CHAT : chat(4 + (i % 9), i);
      texts.push(...conversation.split('\n').map((l) => l.replace(/^user[12]: /, '')));
      if (i % 2 === 0) {
        const messages = conversation.split('\n').map((l) => ({ user: l.slice(0, 5), text: l.slice(7) }));
        lines.push(JSON.stringify({ id: `chat-${String(i).padStart(3, '0')}`, messages, ...(i % 4 === 0 ? { age_a: 'adult', age_b: '13-15' } : {}) }));
      } else {
        lines.push(JSON.stringify(conversation));
      }
    }
    const page = await newPage();
    await openWithKey(page, main);
    await page.locator('#tab-file').click();
    const dropped = await page.evaluateHandle(
      `(() => { const dt = new DataTransfer(); dt.items.add(new File([${JSON.stringify(`${lines.join('\n')}\n`)}], 'chats.jsonl', { type: 'application/jsonl' })); return dt; })()`,
    );
    await page.locator('#file-drop').dispatchEvent('drop', { dataTransfer: dropped });
    await eventually(() => page.locator('#file-summary').textContent()).toContain('200 chats read from chats.jsonl.');
    expect(await page.locator('#file-submit').textContent()).toBe('Score 200 chats');

    const submitted = page.waitForRequest((r) => r.url().endsWith('/v2/predict/batch') && r.method() === 'POST');
    await page.locator('#file-submit').click();
    const body = JSON.parse((await submitted).postData() ?? '{}') as { mode: string; conversations: Array<{ id: string; explain: boolean }> };
    expect(body.mode).toBe('batch');
    expect(body.conversations).toHaveLength(200);
    expect(body.conversations.every((c) => c.explain === true)).toBe(true);
    expect(body.conversations[1]?.id).toBe('line-2');

    // Watch the bar until the job is done: every value read is within 0..200, never going back.
    const seen: string[] = [];
    let last = -1;
    for (const started = Date.now(); Date.now() - started < 60_000; ) {
      const label = (await page.locator('#file-job label').textContent()) ?? '';
      const value = Number(await page.locator('#file-progress').getAttribute('value'));
      expect(value).toBeGreaterThanOrEqual(last);
      last = value;
      if (seen.at(-1) !== label) seen.push(label);
      if (label.startsWith('Done')) break;
      await page.waitForTimeout(50);
    }
    expect(seen[0]).toBe('Queued: 0 of 200 chats');
    expect(seen.at(-1)).toBe('Done: 200 of 200 chats');
    expect(await page.locator('#file-progress').getAttribute('max')).toBe('200');
    expect(await page.locator('#file-progress').getAttribute('value')).toBe('200');
    await shot(page, '2-file-progress-done', false);

    // The table: 200 rows, highest score first, band counts that add up.
    const rows = page.locator('table.results tbody tr');
    expect(await rows.count()).toBe(200);
    const scoresShown = async () => (await page.locator('table.results tbody tr td:nth-child(3)').allTextContents()).map(Number);
    const descending = await scoresShown();
    expect(descending).toEqual([...descending].sort((a, b) => b - a));
    const counts = (await page.locator('.band-counts').textContent()) ?? '';
    const total = [...counts.matchAll(/(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(total).toBe(200);
    expect(await page.locator('table.results thead th[aria-sort="descending"]').textContent()).toContain('Score');
    await shot(page, '2-file-results');

    // Sort: score ascending, then by chat id.
    await page.locator('button[data-sort="score"]').click();
    const ascending = await scoresShown();
    expect(ascending).toEqual([...descending].sort((a, b) => a - b));
    expect(await page.locator('table.results thead th[aria-sort="ascending"]').textContent()).toContain('Score');
    await page.locator('button[data-sort="id"]').click();
    const ids = await page.locator('table.results tbody th button').allTextContents();
    expect(ids).toEqual([...ids].sort((a, b) => a.localeCompare(b)));
    await page.locator('button[data-sort="score"]').click();

    // Filter by the band of the highest-scored chat.
    const topBand = (await rows.first().locator('td:nth-child(4)').textContent()) ?? '';
    const bandCount = Number(new RegExp(`${topBand} (\\d+)`).exec(counts)?.[1]);
    // A click, not check(): choosing a band redraws the list, radios included.
    await page.locator(`input[name="band"][value="${topBand}"]`).click();
    expect(await rows.count()).toBe(bandCount);
    expect(new Set(await page.locator('table.results tbody td:nth-child(4)').allTextContents())).toEqual(new Set([topBand]));
    expect(await page.locator('table.results caption').textContent()).toContain(`${bandCount} of 200 chats`);

    // Export the rows shown: CSV and JSONL, ids and numbers only.
    const csvDownload = page.waitForEvent('download');
    await page.locator('#export-csv').click();
    const csv = readFileSync((await (await csvDownload).path()) as string, 'utf8').trimEnd().split('\r\n');
    expect(csv[0]).toBe(EXPORT_COLUMNS.join(','));
    expect(csv).toHaveLength(bandCount + 1);
    const jsonlDownload = page.waitForEvent('download');
    await page.locator('#export-jsonl').click();
    const download = await jsonlDownload;
    expect(download.suggestedFilename()).toMatch(/^conversation-risk-[0-9a-f-]+-[a-z-]+\.jsonl$/);
    const records = readFileSync((await download.path()) as string, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(bandCount);
    for (const r of records) {
      expect(Object.keys(r)).toEqual([...EXPORT_COLUMNS]);
      expect(r.risk_level).toBe(topBand);
    }
    const exported = `${csv.join('\n')}\n${JSON.stringify(records)}`;
    for (const text of new Set(texts)) expect(exported).not.toContain(text);
    await page.locator('input[name="band"][value="all"]').click();
    expect(await rows.count()).toBe(200);

    // Open a row by keyboard: its chat and explanation; Escape goes back to the row.
    const open = page.locator('button[data-open="line-8"]');
    await open.focus();
    await page.keyboard.press('Enter');
    const detail = page.locator('#file-detail');
    await detail.locator('.chart').waitFor();
    expect(await page.locator('#file-results').isHidden()).toBe(true);
    expect(await detail.locator('h3').first().textContent()).toBe('line-8 (file line 8)');
    // The id is the file's own text: isolated, so a bidi override in it cannot reorder the line number.
    expect(await detail.locator('h3 > bdi').textContent()).toBe('line-8');
    expect(await page.locator(':focus').getAttribute('id')).toBe('file-detail-title');
    expect(await detail.locator('ol.chat > li').count()).toBe(6);
    expect(await detail.locator('ol.chat > li').nth(4).locator('.msg-text').textContent()).toBe('are you home alone');
    expect(await detail.locator('.first-alert-label').count()).toBe(1);
    await shot(page, '2-file-row');
    await page.keyboard.press('Escape');
    expect(await detail.isHidden()).toBe(true);
    expect(await page.locator(':focus').getAttribute('data-open')).toBe('line-8');
  }, 120_000);

  it('a wrong key: 403 and 401 each say so, and nothing is scored', async () => {
    const page = await newPage();
    await openWithKey(page, main, 'wrong-key-0000000000000000');
    await scoreChat(page, ALERTING_CHAT);
    await eventually(() => noticeOf(page).textContent()).toBe(
      'The appliance does not accept this API key (403: Invalid API key). Check the key, type it again and press Use key.',
    );
    expect(await page.locator('#chat-result').isHidden()).toBe(true);
    await shot(page, '3-wrong-key', false);
    await openWithKey(page, main, 'two words');
    await scoreChat(page, ALERTING_CHAT);
    await eventually(() => noticeOf(page).textContent()).toMatch(/^No usable API key reached the appliance \(401: API key required \(Bearer token\)\)/);
    // No key at all: nothing is sent.
    await page.goto(`${main.url}/console`);
    await scoreChat(page, ALERTING_CHAT);
    await eventually(() => noticeOf(page).textContent()).toBe('Type the API key at the top of the page and press Use key.');
  }, 60_000);

  it('the rate limit: 429 says when to retry, from Retry-After', async () => {
    const page = await newPage();
    await openWithKey(page, limited);
    await scoreChat(page, ALERTING_CHAT);
    await page.locator('#chat-result .chart').waitFor();
    const refused = page.waitForResponse((r) => r.url().endsWith('/predict?explain=true'));
    await scoreChat(page, ALERTING_CHAT);
    const response = await refused;
    expect(response.status()).toBe(429);
    const retryAfter = response.headers()['retry-after'];
    expect(retryAfter).toMatch(/^\d+$/);
    await eventually(() => noticeOf(page).textContent()).toMatch(
      new RegExp(`^Rate limit reached for this API key \\(429: Rate limit exceeded: 1 requests per window; retry in .+\\)\\. Retry in ${retryAfter} s \\(at \\d\\d:\\d\\d:\\d\\d\\)\\.$`),
    );
    expect(await page.locator('#chat-result').isHidden()).toBe(true);
    await shot(page, '4-rate-limit', false);
  }, 60_000);

  it('a file over 64 MiB is not read: the page says to split it, and offers nothing to score', async () => {
    const page = await newPage();
    await openWithKey(page, main);
    await page.locator('#tab-file').click();
    const dropped = await page.evaluateHandle(
      `(() => { const dt = new DataTransfer(); dt.items.add(new File([new Uint8Array(65 * 1024 * 1024)], 'huge.jsonl', { type: 'application/jsonl' })); return dt; })()`,
    );
    await page.locator('#file-drop').dispatchEvent('drop', { dataTransfer: dropped });
    await eventually(() => page.locator('#file-summary').textContent()).toBe('huge.jsonl is 65 MiB, over the 64 MiB this page reads: split it into smaller files.');
    expect(await page.locator('#file-submit').isHidden()).toBe(true);
  }, 60_000);

  it('a degraded model: 503 says the model is not loaded and when to retry, for a chat and for a file', async () => {
    const page = await newPage();
    await openWithKey(page, degraded);
    await scoreChat(page, ALERTING_CHAT);
    await eventually(() => noticeOf(page).textContent()).toMatch(/^The model is not loaded/);
    expect(await noticeOf(page).textContent()).toMatch(/^The model is not loaded: .*\(503: Model is not loaded; the service is degraded\)\. Retry in 30 s \(at \d\d:\d\d:\d\d\); if it lasts, tell the appliance's operator\.$/);
    await shot(page, '5-degraded', false);
    await page.locator('#tab-file').click();
    await page.locator('#file-input').setInputFiles({ name: 'two.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(`${JSON.stringify(chat(4))}\n${JSON.stringify(chat(5, 1))}\n`) });
    await page.locator('#file-submit').click();
    await eventually(() => page.locator('#file-notice').textContent()).toMatch(/^The model is not loaded: .*Retry in 30 s/);
  }, 60_000);

  it('keyboard only: skip link, key, tabs with arrow keys, the form, the score, and the jump to the first alert', async () => {
    const page = await newPage();
    await page.goto(`${main.url}/console`);
    const focused = () => page.locator(':focus');
    await page.keyboard.press('Tab');
    expect(await focused().textContent()).toBe('Skip to the console');
    await page.keyboard.press('Tab');
    expect(await focused().getAttribute('id')).toBe('key-input');
    await page.keyboard.type(TEST_KEY);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await focused().textContent()).toBe('Use key');
    await page.keyboard.press('Tab');
    expect(await focused().textContent()).toBe('Forget key');
    await page.keyboard.press('Tab');
    expect(await focused().getAttribute('id')).toBe('tab-chat');
    await page.keyboard.press('ArrowRight');
    expect(await focused().getAttribute('id')).toBe('tab-file');
    expect(await page.locator('#panel-file').isVisible()).toBe(true);
    expect(await page.locator('#panel-chat').isHidden()).toBe(true);
    await page.keyboard.press('ArrowLeft');
    expect(await focused().getAttribute('aria-selected')).toBe('true');
    expect(await page.locator('#panel-chat').isVisible()).toBe(true);
    await page.keyboard.press('Tab');
    expect(await focused().getAttribute('id')).toBe('chat-text');
    await page.keyboard.type(ALERTING_CHAT);
    await page.keyboard.press('Tab');
    expect(await focused().getAttribute('id')).toBe('age-a');
    await page.keyboard.type('34');
    await page.keyboard.press('Tab');
    expect(await focused().getAttribute('id')).toBe('age-b');
    await page.keyboard.press('Tab');
    expect(await focused().getAttribute('id')).toBe('chat-score');
    await page.keyboard.press('Enter');
    await page.locator('#chat-result .chart').waitFor();
    await page.keyboard.press('Tab');
    expect(await focused().textContent()).toBe('message 2');
    await page.keyboard.press('Enter');
    expect(await focused().getAttribute('id')).toBe('chat-msg-2');
    expect(await focused().locator('.badge-alert').textContent()).toBe('First alert');
    await shot(page, '6-keyboard', false);
  }, 60_000);

  it('readable at 1280x800 and in a narrow window (390 px): nothing wider than the window', async () => {
    const wide = await newPage({ width: 1280, height: 800 });
    await openWithKey(wide, main);
    await scoreChat(wide, ALERTING_CHAT);
    await wide.locator('#chat-result .chart').waitFor();
    expect(await horizontalOverflow(wide)).toBe(0);
    await shot(wide, '7-wide-1280x800', false);

    const narrow = await newPage({ width: 390, height: 844 });
    await openWithKey(narrow, main);
    expect(await horizontalOverflow(narrow)).toBe(0);
    await scoreChat(narrow, ALERTING_CHAT);
    await narrow.locator('#chat-result .chart').waitFor();
    expect(await horizontalOverflow(narrow)).toBe(0);
    const chartBox = await narrow.locator('#chat-result svg.chart').boundingBox();
    expect(chartBox?.width).toBeLessThanOrEqual(390);
    await shot(narrow, '7-narrow-one-chat');
    await narrow.locator('#tab-file').click();
    const file = Array.from({ length: 12 }, (_, i) => JSON.stringify({ id: `narrow-${i}`, messages: chat(4, i).split('\n').map((l) => ({ user: l.slice(0, 5), text: l.slice(7) })) })).join('\n');
    await narrow.locator('#file-input').setInputFiles({ name: 'twelve.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(file) });
    await narrow.locator('#file-submit').click();
    await eventually(() => narrow.locator('table.results tbody tr').count()).toBe(12);
    expect(await horizontalOverflow(narrow)).toBe(0);
    await shot(narrow, '7-narrow-file');
  }, 90_000);

  it('throughout: no request left for another origin, the key only in Authorization headers, nothing stored, no CSP violation', async () => {
    const origins = new Set([main.url, limited.url, degraded.url].map((u) => new URL(u).origin));
    expect(requests.length).toBeGreaterThan(20);
    for (const r of requests) {
      // A download's blob: URL carries the page's own origin.
      const origin = new URL(r.url.startsWith('blob:') ? r.url.slice(5) : r.url).origin;
      expect(origins.has(origin), r.url).toBe(true);
      expect(r.url).not.toContain(TEST_KEY);
      const isApi = /\/(predict|v2\/)/.test(new URL(r.url.startsWith('blob:') ? r.url.slice(5) : r.url).pathname);
      if (!isApi) expect(r.authorization, r.url).toBeUndefined();
    }
    const apiCalls = requests.filter((r) => /\/(predict\?explain=true|v2\/predict)/.test(r.url));
    expect(apiCalls.length).toBeGreaterThan(5);
    expect(apiCalls.filter((r) => r.authorization === `Bearer ${TEST_KEY}`).length).toBeGreaterThan(5);
    for (const context of contexts) {
      for (const page of context.pages()) {
        expect(await page.evaluate('JSON.stringify([localStorage.length, sessionStorage.length, document.cookie])')).toBe('[0,0,""]');
      }
      expect(await context.cookies()).toEqual([]);
    }
    expect(problems).toEqual([]);
  });
});
