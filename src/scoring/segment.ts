// Pieces and segments, docs/model-contract.md steps 3 and 4.

export interface Piece {
  /** 1 = user1, 2 = user2. */
  speakerId: number;
  ids: number[];
}

/** Cuts each turn's token ids into consecutive pieces of at most `maxTokens` ids; empty turns vanish. */
export function toPieces(turns: Array<{ speakerId: number; ids: number[] }>, maxTokens: number): Piece[] {
  const pieces: Piece[] = [];
  for (const t of turns) {
    const n = t.ids.length;
    if (n <= maxTokens) {
      if (n > 0) pieces.push(t);
      continue;
    }
    for (let start = 0; start < n; start += maxTokens) {
      pieces.push({ speakerId: t.speakerId, ids: t.ids.slice(start, start + maxTokens) });
    }
  }
  return pieces;
}

/** Segment sizes for `pieceCount` pieces: n = max(1, ceil(P / M)), the first P mod n one larger. */
export function segmentSizes(pieceCount: number, maxTurns: number): number[] {
  const n = Math.max(1, Math.ceil(pieceCount / maxTurns));
  const base = Math.floor(pieceCount / n);
  const extra = pieceCount % n;
  const sizes = new Array<number>(n);
  for (let i = 0; i < n; i++) sizes[i] = base + (i < extra ? 1 : 0);
  return sizes;
}

/** Deals pieces out in order into balanced segments that break only between pieces. */
export function segmentPieces<T>(pieces: T[], maxTurns: number): T[][] {
  const out: T[][] = [];
  let at = 0;
  for (const size of segmentSizes(pieces.length, maxTurns)) {
    out.push(pieces.slice(at, at + size));
    at += size;
  }
  return out;
}
