// One chat's result: the score, band, side named and confidence; the running-risk chart; the chat
// itself, each message shaded by how much it moved the running score, the first alert and the
// evidence marked in words as well as colour. Used for a pasted chat and for a row of a file's job.
import { describeChart, renderChart } from './chart.ts';
import { bandClass, el, fixed, signed } from './dom.ts';
import { rises, shade } from './explain.ts';
import type { ShownMessage } from './input.ts';
import type { Explanation, Scores } from './types.ts';

export interface ShownChat {
  scores: Scores;
  /** One entry per explanation entry: v1 turns, or v2 messages. */
  messages: ShownMessage[];
}

/** The first message's rise is known only as evidence, or as no rise at all (rises() in explain.ts). */
function riseText(i: number, rise: number | undefined, evidenceRank: number | undefined): string {
  if (rise === undefined) return 'rise —';
  return i === 0 && evidenceRank === undefined ? 'no rise' : signed(rise);
}

const sideNamed = (s: Scores) => (s.predatory_user === 'neither' ? 'neither side' : s.predatory_user);

function summary(s: Scores): HTMLElement {
  const item = (term: string, value: Node | string, cls = '') => el('div', { class: `fact ${cls}` }, el('dt', {}, term), el('dd', {}, value));
  return el(
    'dl',
    { class: 'summary' },
    item('Score', fixed(s.harmfulness_score), 'fact-score'),
    item('Band', el('span', { class: `band ${bandClass(s.risk_level)}` }, s.risk_level)),
    item('Side named', sideNamed(s)),
    item('Confidence', fixed(s.confidence)),
    item('Harmful (score > 0.5)', s.is_harmful ? 'yes' : 'no'),
    item(
      'Attribution',
      `user1 ${fixed(s.user_probabilities.user1)} · user2 ${fixed(s.user_probabilities.user2)} · neither ${fixed(s.user_probabilities.neither)}`,
      'fact-wide',
    ),
    item('Segments / ages used', `${s.num_segments} / ${s.used_age_features ? 'yes' : 'no'}`),
  );
}

function jumpTo(target: HTMLElement | null): void {
  if (target === null) return;
  target.scrollIntoView({ block: 'center' });
  target.focus();
}

export function renderResult(host: HTMLElement, chat: ShownChat, idPrefix: string): void {
  const { scores, messages } = chat;
  const e = scores.explanation;
  host.replaceChildren(summary(scores));
  if (e === undefined) {
    host.append(el('p', {}, 'The answer has no explanation.'));
    return;
  }
  const rank = new Map(e.evidence.map((v, i) => [v.index, i + 1]));
  const messageId = (i: number) => `${idPrefix}-msg-${i + 1}`;
  const messageOf = (i: number) => document.getElementById(messageId(i));

  // Where to look: the first alert and the evidence, as buttons that move to the message.
  const pointers = el('div', { class: 'pointers' });
  if (e.first_alert_index !== null) {
    const at = e.first_alert_index;
    pointers.append(
      el('p', {}, 'First alert at ', el('button', { type: 'button', class: 'link', 'data-jump': at + 1 }, `message ${at + 1}`), ` (running score ${fixed(e.turn_scores[at] ?? 0)}).`),
    );
  } else {
    pointers.append(el('p', {}, `No alert: the running score never goes above 0.5.`));
  }
  if (e.evidence.length > 0) {
    const list = el('ol', { class: 'evidence-list' });
    for (const v of e.evidence) {
      list.append(el('li', {}, el('button', { type: 'button', class: 'link', 'data-jump': v.index + 1 }, `message ${v.index + 1}`), ` ${v.user}, ${signed(v.weight)}`));
    }
    pointers.append(el('p', { class: 'evidence-head' }, 'Evidence, strongest first:'), list);
  }
  pointers.addEventListener('click', (ev) => {
    const button = ev.target instanceof Element ? ev.target.closest('button[data-jump]') : null;
    if (button !== null) jumpTo(messageOf(Number(button.getAttribute('data-jump')) - 1));
  });

  const figure = el(
    'figure',
    { class: 'chart-box' },
    el('figcaption', {}, 'Running risk after each message, with the band thresholds, the alert line (0.5), the first alert and the numbered evidence. ', describeChart(e)),
  );

  const riseOf = rises(e);
  const list = el('ol', { class: 'chat', 'aria-label': 'The chat, message by message' });
  e.turn_scores.forEach((score, i) => {
    const m = messages[i];
    const rise = riseOf[i];
    const isAlert = e.first_alert_index === i;
    const evidenceRank = rank.get(i);
    const classes = ['msg', `shade-${shade(rise)}`, isAlert ? 'is-alert' : '', evidenceRank !== undefined ? 'is-evidence' : ''].filter((c) => c !== '').join(' ');
    list.append(
      el(
        'li',
        { id: messageId(i), class: classes, tabindex: -1 },
        el(
          'div',
          { class: 'msg-head' },
          el('span', { class: 'msg-num' }, `#${i + 1}`),
          el('span', { class: 'who' }, m?.user ?? 'unknown'),
          el('span', { class: 'running' }, `running ${fixed(score)}`),
          el('span', { class: 'rise', title: 'how much the running score moved after this message' }, riseText(i, rise, evidenceRank)),
          isAlert && el('strong', { class: 'badge badge-alert' }, 'First alert'),
          evidenceRank !== undefined && el('strong', { class: 'badge badge-evidence' }, `Evidence ${evidenceRank}`),
        ),
        el('p', { class: 'msg-text' }, m?.text ?? ''),
      ),
    );
  });

  host.append(
    pointers,
    figure,
    el('h3', {}, 'The chat'),
    el('p', { class: 'hint' }, 'The shade of a message is how much the running score rose after it (darker: more); the figures say the same.'),
    list,
  );
  drawChartToFit(figure, e, idPrefix);
}

/** Draws the chart at the figure's width, and again when that width changes (a resized window). */
function drawChartToFit(figure: HTMLElement, e: Explanation, idPrefix: string): void {
  let drawnAt = 0;
  const draw = () => {
    const width = figure.clientWidth;
    if (width === 0 || Math.abs(width - drawnAt) < 24) return;
    drawnAt = width;
    const chart = renderChart(e, idPrefix, width);
    const old = figure.querySelector('svg.chart');
    if (old === null) figure.prepend(chart);
    else old.replaceWith(chart);
  };
  draw();
  const observer = new ResizeObserver(() => (figure.isConnected ? draw() : observer.disconnect()));
  observer.observe(figure);
}
