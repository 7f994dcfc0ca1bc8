// The running risk after every message, as an SVG drawn from code: the five bands as labelled
// stripes with their thresholds, the alert threshold, the score line, the first alert as a labelled
// vertical line and the evidence as numbered markers. Every mark also has words (labels, <title>s and
// the figure's description), so no meaning rests on colour alone.
import { bandClass, fixed, svg } from './dom.ts';
import { ALERT_THRESHOLD, BANDS } from './results.ts';
import type { Explanation } from './types.ts';

/** The chart is drawn at the width it is shown (1 unit = 1 CSS pixel), so its text stays readable. */
const MIN_WIDTH = 300;
const MAX_WIDTH = 1200;
const HEIGHT = 280;
const M = { left: 40, right: 100, top: 28, bottom: 34 };
const PLOT_H = HEIGHT - M.top - M.bottom;
/** Past this many messages the per-message dots would merge into the line: only the line is drawn. */
const MAX_DOTS = 120;

const y = (score: number) => M.top + (1 - score) * PLOT_H;

/** What the chart shows, in one sentence per fact: the figure's accessible description. */
export function describeChart(e: Explanation): string {
  const s = e.turn_scores;
  const n = s.length;
  const parts = [`Running risk after each of ${n} message${n === 1 ? '' : 's'}: ${fixed(s[0] ?? 0)} after the first, ${fixed(s[n - 1] ?? 0)} at the end.`];
  parts.push(
    e.first_alert_index === null
      ? `It never goes above the alert threshold ${ALERT_THRESHOLD}.`
      : `It first goes above ${ALERT_THRESHOLD} at message ${e.first_alert_index + 1} (${fixed(s[e.first_alert_index] ?? 0)}).`,
  );
  if (e.evidence.length > 0) parts.push(`Evidence, strongest first: ${e.evidence.map((v) => `message ${v.index + 1}`).join(', ')}.`);
  return parts.join(' ');
}

export function renderChart(e: Explanation, idPrefix: string, shownWidth: number): SVGSVGElement {
  const WIDTH = Math.round(Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, shownWidth)));
  const PLOT_W = WIDTH - M.left - M.right;
  const scores = e.turn_scores;
  const n = scores.length;
  const x = (i: number) => (n <= 1 ? M.left + PLOT_W / 2 : M.left + (i / (n - 1)) * PLOT_W);
  const titleId = `${idPrefix}-chart-title`;
  const descId = `${idPrefix}-chart-desc`;
  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'chart',
    role: 'img',
    'aria-labelledby': titleId,
    'aria-describedby': descId,
    preserveAspectRatio: 'xMidYMid meet',
  });
  chart.append(svg('title', { id: titleId }, 'Running risk after each message'), svg('desc', { id: descId }, describeChart(e)));

  // Bands: a stripe each, named at the right, with its lower threshold on the axis.
  let top = 1;
  for (const band of BANDS) {
    chart.append(
      svg('rect', { class: `stripe ${bandClass(band.level)}`, x: M.left, y: y(top), width: PLOT_W, height: y(band.from) - y(top) }),
      svg('text', { class: 'band-label', x: M.left + PLOT_W + 8, y: (y(top) + y(band.from)) / 2 + 4 }, band.level),
    );
    if (band.from > 0) chart.append(svg('line', { class: 'threshold', x1: M.left, x2: M.left + PLOT_W, y1: y(band.from), y2: y(band.from) }));
    top = band.from;
  }
  for (const tick of [0, 0.2, 0.4, 0.6, 0.8, 1]) {
    chart.append(svg('text', { class: 'axis', x: M.left - 6, y: y(tick) + 4, 'text-anchor': 'end' }, tick === 0 || tick === 1 ? String(tick) : tick.toFixed(1)));
  }
  chart.append(
    svg('line', { class: 'alert-threshold', x1: M.left, x2: M.left + PLOT_W, y1: y(ALERT_THRESHOLD), y2: y(ALERT_THRESHOLD) }),
    svg('text', { class: 'axis alert-threshold-label', x: M.left + 4, y: y(ALERT_THRESHOLD) - 4 }, `alert > ${ALERT_THRESHOLD}`),
  );

  // Messages along the bottom: the first, the last and a few between (one per 80 px), numbered from 1.
  const step = Math.max(1, Math.ceil(n / Math.max(2, Math.floor(PLOT_W / 80))));
  for (let i = 0; i < n; i += step) chart.append(svg('text', { class: 'axis', x: x(i), y: HEIGHT - M.bottom + 16, 'text-anchor': 'middle' }, i + 1));
  if ((n - 1) % step !== 0) chart.append(svg('text', { class: 'axis', x: x(n - 1), y: HEIGHT - M.bottom + 16, 'text-anchor': 'middle' }, n));
  chart.append(svg('text', { class: 'axis', x: M.left + PLOT_W / 2, y: HEIGHT - 4, 'text-anchor': 'middle' }, 'message'));

  // The first alert: a vertical line, labelled.
  if (e.first_alert_index !== null) {
    const ax = x(e.first_alert_index);
    const rightHalf = ax > M.left + PLOT_W / 2;
    chart.append(
      svg('line', { class: 'first-alert', x1: ax, x2: ax, y1: M.top - 6, y2: M.top + PLOT_H }),
      svg(
        'text',
        { class: 'first-alert-label', x: rightHalf ? ax - 6 : ax + 6, y: M.top - 10, 'text-anchor': rightHalf ? 'end' : 'start' },
        `First alert: message ${e.first_alert_index + 1}`,
      ),
    );
  }

  chart.append(svg('polyline', { class: 'score-line', points: scores.map((s, i) => `${x(i).toFixed(1)},${y(s).toFixed(1)}`).join(' ') }));
  if (n <= MAX_DOTS) {
    scores.forEach((s, i) => chart.append(svg('circle', { class: 'dot', cx: x(i), cy: y(s), r: 3 }, svg('title', {}, `message ${i + 1}: ${fixed(s)}`))));
  }

  // Evidence: a numbered diamond on the line, strongest first.
  e.evidence.forEach((v, rank) => {
    const cx = x(v.index);
    const cy = y(scores[v.index] ?? 0);
    chart.append(
      svg(
        'g',
        { class: 'evidence-mark' },
        svg('path', { d: `M${cx} ${cy - 8} L${cx + 8} ${cy} L${cx} ${cy + 8} L${cx - 8} ${cy} Z` }),
        svg('text', { x: cx, y: cy + 4, 'text-anchor': 'middle' }, rank + 1),
        svg('title', {}, `Evidence ${rank + 1}: message ${v.index + 1}, ${v.user}, rose ${fixed(v.weight)}`),
      ),
    );
  });
  return chart;
}
