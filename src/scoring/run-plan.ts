// Which segments of a batch share one ONNX run. A run pads every segment to the batch's longest, and
// the model's GRU steps through every padded piece, so a short segment beside a full one costs as much
// as the full one. Since turns are cut in 8-token pieces (model 3.6.0), a 40-turn chat of ordinary
// messages is a full segment of 64 pieces and one of 16: run together, the 16 are padded to 64. A
// second run costs a fixed overhead, so the batch is cut, in order of length, only where the padding
// saved pays for it.

/**
 * A run's fixed cost in padded pieces. Measured on the 2-core machine (model 3.6.0, one intra-op
 * thread, 16 bench chats of 40 turns): one run of 32 segments padded to 64 pieces took 14.9 ms, two
 * runs of 16 x 64 and 16 x 16 pieces 10.2 ms, so a run costs about 0.64 ms and a padded piece-row
 * 0.007 ms: about 90 piece-rows.
 */
export const RUN_OVERHEAD_PIECES = 90;

/**
 * The runs for segments of these piece counts: groups of their indices, together covering every index
 * once, that minimise the sum over runs of (overhead + segments x longest), the longest-first order
 * cut into consecutive groups (optimal for that order, by dynamic programming over its cut points).
 */
export function planRuns(pieces: readonly number[], overhead = RUN_OVERHEAD_PIECES): number[][] {
  const n = pieces.length;
  if (n <= 1) return n === 0 ? [] : [[0]];
  const order = pieces.map((_, i) => i).sort((a, b) => (pieces[b] as number) - (pieces[a] as number) || a - b);
  const longest = order.map((i) => pieces[i] as number);
  // best[j]: the least cost of the first j segments in that order; cut[j]: where its last run starts.
  const best = new Float64Array(n + 1);
  const cut = new Int32Array(n + 1);
  for (let j = 1; j <= n; j++) {
    best[j] = Infinity;
    for (let i = 0; i < j; i++) {
      const cost = (best[i] as number) + overhead + (j - i) * (longest[i] as number);
      if (cost < (best[j] as number)) {
        best[j] = cost;
        cut[j] = i;
      }
    }
  }
  const runs: number[][] = [];
  for (let j = n; j > 0; j = cut[j] as number) runs.push(order.slice(cut[j] as number, j));
  return runs.reverse();
}
