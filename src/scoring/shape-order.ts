// The order segments go to the model in: by shape, so segments of similar shape share an ONNX batch
// and waste little padding. Kept apart from worker.ts, which loads the model when imported.
import type { EncodedSegment } from './encode.ts';
import type { ModelItem } from './inference.ts';

function longestPiece(segment: EncodedSegment): number {
  let longest = 0;
  for (const ids of segment.inputIds) if (ids.length > longest) longest = ids.length;
  return longest;
}

/** Token slots the segment takes in an ONNX batch when padded to its own longest piece. */
export function paddedTokens(segment: EncodedSegment): number {
  return segment.inputIds.length * longestPiece(segment);
}

/** Sort key: segments of similar shape next to each other waste little padding. */
function shapeKey(segment: EncodedSegment): number {
  return segment.inputIds.length * 1024 + longestPiece(segment);
}

/**
 * Orders the items (and their owners and positions alongside) by shape, in place. Copied back one by
 * one: spread into splice, half a million segments (a large /batch_predict body) overflow the call's
 * argument limit.
 */
export function sortByShape(items: ModelItem[], owners: number[], positions: number[]): void {
  // Each key once, not twice per comparison: it walks every piece of the segment.
  const keys = items.map((item) => shapeKey(item.segment));
  const order = items.map((_, i) => i).sort((a, b) => (keys[a] as number) - (keys[b] as number));
  const sortedItems = order.map((i) => items[i] as ModelItem);
  const sortedOwners = order.map((i) => owners[i] as number);
  const sortedPositions = order.map((i) => positions[i] as number);
  for (let k = 0; k < order.length; k++) {
    items[k] = sortedItems[k] as ModelItem;
    owners[k] = sortedOwners[k] as number;
    positions[k] = sortedPositions[k] as number;
  }
}
