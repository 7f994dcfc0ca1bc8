// A file of chats: read a dropped or chosen JSONL file, submit it as one /v2 batch job (explanations
// on), poll it with a progress bar, then list the results sorted by score with band counts, filter by
// band, open a row in the one-chat view, and export the shown rows as CSV or JSONL.
import { ApiError, failureMessage, type Api } from './api.ts';
import { bandClass, byId, el, fixed } from './dom.ts';
import { readJsonl, type FileChat, type ReadFile } from './input.ts';
import { BANDS, bandCounts, filterRows, sortRows, toCsv, toJsonl, type BandFilter, type Row, type SortDirection, type SortKey } from './results.ts';
import type { JobView } from './types.ts';
import { renderResult } from './view-result.ts';

/** Lines a summary lists by name before it says "and N more". */
const LISTED_REFUSALS = 10;
/**
 * The largest file read: past it the tab would hold the whole text (and its parse) for a job the API
 * would refuse anyway (a job's body is at most BODY_LIMIT_BYTES, 32 MiB by default).
 */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Polling: the first poll soon, then further apart (every poll spends the key's rate-limit budget). */
const POLL_FIRST_MS = 400;
const POLL_MAX_MS = 5000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Notices {
  show(message: string): void;
  clear(): void;
}

export function setupFileView(api: Api, notices: Notices): void {
  const input = byId('file-input', HTMLInputElement);
  const drop = byId('file-drop', HTMLElement);
  const summary = byId('file-summary', HTMLElement);
  const submit = byId('file-submit', HTMLButtonElement);
  const job = byId('file-job', HTMLElement);
  const results = byId('file-results', HTMLElement);
  const detail = byId('file-detail', HTMLElement);

  let read: ReadFile | undefined;
  let chats = new Map<string, FileChat>();
  let rows: Row[] = [];
  let sortKey: SortKey = 'score';
  let direction: SortDirection = 'descending';
  let band: BandFilter = 'all';
  let jobId = '';
  let lastOpened = '';
  /** Bumped by each new file and each run: a job still polled for an earlier one draws nothing. */
  let current = 0;

  async function load(file: File): Promise<void> {
    current++;
    notices.clear();
    results.replaceChildren();
    detail.hidden = true;
    job.replaceChildren();
    if (file.size > MAX_FILE_BYTES) {
      read = undefined;
      summary.replaceChildren(el('p', {}, `${file.name} is ${Math.ceil(file.size / 1024 / 1024)} MiB, over the ${MAX_FILE_BYTES / 1024 / 1024} MiB this page reads: split it into smaller files.`));
      submit.hidden = true;
      return;
    }
    read = readJsonl(await file.text());
    const count = read.chats.length;
    const parts: Array<Node | string> = [el('p', {}, `${count} chat${count === 1 ? '' : 's'} read from ${file.name}.`)];
    if (read.refused.length > 0) {
      const list = el('ul', { class: 'refused' });
      // The reason quotes the file's own text (an id): isolated, a bidi override in it cannot reorder the line number.
      for (const r of read.refused.slice(0, LISTED_REFUSALS)) list.append(el('li', {}, `line ${r.line}: `, el('bdi', {}, r.reason)));
      if (read.refused.length > LISTED_REFUSALS) list.append(el('li', {}, `and ${read.refused.length - LISTED_REFUSALS} more`));
      parts.push(el('p', {}, `${read.refused.length} line${read.refused.length === 1 ? '' : 's'} left out:`), list);
    }
    summary.replaceChildren(...parts);
    submit.hidden = count === 0;
    submit.disabled = count === 0;
    submit.textContent = `Score ${count} chat${count === 1 ? '' : 's'}`;
  }

  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file !== undefined) void load(file).catch((err: unknown) => notices.show(failureMessage(err)));
  });
  // Dropping a file on the area does what choosing it does; the browser must not open it instead.
  drop.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    drop.classList.add('is-over');
  });
  drop.addEventListener('dragleave', () => drop.classList.remove('is-over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('is-over');
    const file = ev.dataTransfer?.files[0];
    if (file !== undefined) void load(file).catch((err: unknown) => notices.show(failureMessage(err)));
  });

  submit.addEventListener('click', () => {
    if (read === undefined || read.chats.length === 0) return;
    void run(read.chats);
  });

  function showProgress(view: Pick<JobView, 'status' | 'progress'>): void {
    const { done, total } = view.progress;
    const label = view.status === 'queued' ? 'Queued' : view.status === 'running' ? 'Scoring' : view.status === 'done' ? 'Done' : 'Failed';
    job.replaceChildren(
      el('label', { for: 'file-progress' }, `${label}: ${done} of ${total} chats`),
      el('progress', { id: 'file-progress', max: Math.max(total, 1), value: done }),
    );
  }

  async function run(toScore: FileChat[]): Promise<void> {
    const mine = ++current;
    notices.clear();
    submit.disabled = true;
    results.replaceChildren();
    detail.hidden = true;
    chats = new Map(toScore.map((c) => [c.item.id, c]));
    try {
      showProgress({ status: 'queued', progress: { done: 0, total: toScore.length } });
      const accepted = await api.submitJob(toScore.map((c) => c.item));
      if (mine !== current) return;
      jobId = accepted.job_id;
      let wait = POLL_FIRST_MS;
      for (;;) {
        await sleep(wait);
        if (mine !== current) return;
        let view: JobView;
        try {
          view = await api.job(accepted.job_id);
        } catch (err) {
          // Over the rate limit while polling: say so, wait as told, and go on polling.
          if (err instanceof ApiError && err.status === 429) {
            notices.show(`${failureMessage(err)} The console waits and polls again.`);
            wait = (err.retryAfterS ?? 5) * 1000;
            continue;
          }
          throw err;
        }
        if (mine !== current) return;
        notices.clear();
        showProgress(view);
        if (view.status === 'done' || view.status === 'failed') {
          if (view.status === 'failed') notices.show(`The job failed: ${view.error ?? 'no reason given'}. The chats scored before it failed are listed.`);
          showResults(view);
          return;
        }
        wait = Math.min(POLL_MAX_MS, wait * 1.5);
      }
    } catch (err) {
      if (mine === current) notices.show(failureMessage(err));
    } finally {
      submit.disabled = false;
    }
  }

  function showResults(view: JobView): void {
    rows = [];
    for (const [id, scores] of Object.entries(view.results ?? {})) {
      rows.push({ id, line: chats.get(id)?.line ?? 0, scores });
    }
    sortKey = 'score';
    direction = 'descending';
    band = 'all';
    drawResults();
  }

  function exportRows(shown: Row[], format: 'csv' | 'jsonl'): void {
    const text = format === 'csv' ? toCsv(shown) : toJsonl(shown);
    const type = format === 'csv' ? 'text/csv' : 'application/jsonl';
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = el('a', { href: url, download: `conversation-risk-${jobId}${band === 'all' ? '' : `-${bandClass(band).slice(5)}`}.${format}` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  function drawResults(focusSort?: SortKey): void {
    const counts = bandCounts(rows);
    const shown = sortRows(filterRows(rows, band), sortKey, direction);

    const filter = el('fieldset', { class: 'filter' }, el('legend', {}, 'Show'));
    const option = (value: BandFilter, label: string, count: number) =>
      el(
        'label',
        { class: `pill ${value === 'all' ? '' : bandClass(value)}` },
        el('input', { type: 'radio', name: 'band', value, checked: band === value }),
        ` ${label} (${count})`,
      );
    filter.append(option('all', 'All', rows.length));
    for (const b of BANDS) filter.append(option(b.level, b.level, counts.get(b.level) ?? 0));
    filter.addEventListener('change', (ev) => {
      if (ev.target instanceof HTMLInputElement) {
        band = ev.target.value as BandFilter;
        drawResults();
        results.querySelector<HTMLInputElement>(`input[name="band"][value="${band}"]`)?.focus();
      }
    });

    const header = (key: SortKey, label: string) => {
      const active = sortKey === key;
      return el(
        'th',
        { scope: 'col', 'aria-sort': active ? direction : 'none' },
        el('button', { type: 'button', class: 'sort', 'data-sort': key }, label, el('span', { 'aria-hidden': 'true' }, active ? (direction === 'descending' ? ' ▼' : ' ▲') : '')),
      );
    };
    const table = el(
      'table',
      { class: 'results' },
      el('caption', {}, `${shown.length} of ${rows.length} chats, sorted by ${sortKey} (${direction === 'descending' ? 'highest' : 'lowest'} first)`),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          header('id', 'Chat'),
          header('line', 'Line'),
          header('score', 'Score'),
          el('th', { scope: 'col' }, 'Band'),
          el('th', { scope: 'col' }, 'Side named'),
          header('confidence', 'Confidence'),
          el('th', { scope: 'col' }, 'First alert'),
        ),
      ),
    );
    const body = el('tbody');
    for (const r of shown) {
      const s = r.scores;
      const alert = s.explanation?.first_alert_index;
      body.append(
        el(
          'tr',
          {},
          el('th', { scope: 'row' }, el('button', { type: 'button', class: 'link open', 'data-open': r.id }, r.id)),
          el('td', { class: 'num' }, r.line),
          el('td', { class: 'num' }, fixed(s.harmfulness_score)),
          el('td', {}, el('span', { class: `band ${bandClass(s.risk_level)}` }, s.risk_level)),
          el('td', {}, s.predatory_user),
          el('td', { class: 'num' }, fixed(s.confidence)),
          el('td', { class: 'num' }, alert === null || alert === undefined ? '—' : `message ${alert + 1}`),
        ),
      );
    }
    table.append(body);
    table.addEventListener('click', (ev) => {
      const target = ev.target instanceof Element ? ev.target.closest('button') : null;
      if (target === null) return;
      const sort = target.getAttribute('data-sort');
      const open = target.getAttribute('data-open');
      if (sort !== null) {
        const key = sort as SortKey;
        direction = key === sortKey ? (direction === 'descending' ? 'ascending' : 'descending') : key === 'score' || key === 'confidence' ? 'descending' : 'ascending';
        sortKey = key;
        drawResults(key);
      } else if (open !== null) {
        openRow(open);
      }
    });

    const exports = el(
      'div',
      { class: 'exports' },
      el('span', {}, `Export the ${shown.length} rows shown (ids and numbers only): `),
      el('button', { type: 'button', id: 'export-csv' }, 'CSV'),
      el('button', { type: 'button', id: 'export-jsonl' }, 'JSONL'),
    );
    exports.querySelector('#export-csv')?.addEventListener('click', () => exportRows(shown, 'csv'));
    exports.querySelector('#export-jsonl')?.addEventListener('click', () => exportRows(shown, 'jsonl'));

    const bandSummary = el(
      'p',
      { class: 'band-counts' },
      BANDS.map((b) => `${b.level} ${counts.get(b.level) ?? 0}`).join(' · '),
      rows.length < chats.size ? ` · not scored ${chats.size - rows.length}` : '',
    );
    results.replaceChildren(el('h3', {}, 'Results'), bandSummary, filter, exports, el('div', { class: 'table-wrap' }, table));
    if (focusSort !== undefined) results.querySelector<HTMLButtonElement>(`button[data-sort="${focusSort}"]`)?.focus();
  }

  function openRow(id: string): void {
    const row = rows.find((r) => r.id === id);
    const chat = chats.get(id);
    if (row === undefined || chat === undefined) return;
    lastOpened = id;
    const back = el('button', { type: 'button', class: 'back' }, '← Back to the results');
    const host = el('div', { class: 'result' });
    detail.replaceChildren(back, el('h3', { tabindex: -1, id: 'file-detail-title' }, el('bdi', {}, id), ` (file line ${row.line})`), host);
    renderResult(host, { scores: row.scores, messages: chat.item.messages }, 'row');
    results.hidden = true;
    detail.hidden = false;
    back.addEventListener('click', closeRow);
    detail.querySelector<HTMLElement>('#file-detail-title')?.focus();
  }

  function closeRow(): void {
    detail.hidden = true;
    detail.replaceChildren();
    results.hidden = false;
    for (const b of results.querySelectorAll<HTMLButtonElement>('button[data-open]')) {
      if (b.getAttribute('data-open') === lastOpened) b.focus();
    }
  }

  // Escape in the opened row goes back to the list.
  detail.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && !detail.hidden) closeRow();
  });
}

