// Pieces and segments, docs/model-contract.md steps 3 and 4.

export interface Piece {
  /** 1 = user1, 2 = user2, 3 = unknown. */
  speakerId: number;
  ids: number[];
}

/** How many pieces a turn of `tokens` ids becomes (0 for a turn with no token). */
export function pieceCount(tokens: number, maxTokens: number): number {
  return Math.ceil(tokens / maxTokens);
}

/**
 * Cuts each turn's token ids into consecutive pieces of at most `maxTokens(speakerId)` ids; empty
 * turns vanish.
 */
export function toPieces(turns: Array<{ speakerId: number; ids: number[] }>, maxTokens: (speakerId: number) => number): Piece[] {
  const pieces: Piece[] = [];
  for (const t of turns) {
    const size = maxTokens(t.speakerId);
    const n = pieceCount(t.ids.length, size);
    if (n === 1) pieces.push(t);
    else for (let k = 0; k < n; k++) pieces.push({ speakerId: t.speakerId, ids: t.ids.slice(k * size, (k + 1) * size) });
  }
  return pieces;
}

/**
 * Segment sizes for `pieceCount` pieces: full segments of `maxTurns`, then the rest. Fixed-size
 * segments make every prefix of a conversation segment as the whole does up to its last piece, so
 * the running score one pass yields is exactly what scoring that prefix alone answers.
 */
export function segmentSizes(pieceCount: number, maxTurns: number): number[] {
  if (pieceCount <= maxTurns) return [pieceCount];
  const sizes: number[] = [];
  for (let left = pieceCount; left > 0; left -= maxTurns) sizes.push(Math.min(left, maxTurns));
  return sizes;
}

/** Deals pieces out in order into segments of `maxTurns` (the last one shorter), breaking only between pieces. */
export function segmentPieces<T>(pieces: T[], maxTurns: number): T[][] {
  const out: T[][] = [];
  let at = 0;
  for (const size of segmentSizes(pieces.length, maxTurns)) {
    out.push(pieces.slice(at, at + size));
    at += size;
  }
  return out;
}
