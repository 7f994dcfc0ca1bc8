// What a log may say about an unexpected error. Here in ops, not in http/, because the logger's
// error serializer and the HTTP error handler both use it, and ops must not depend on http.
import { ScoringError } from '../scoring/types.ts';

/** A loggable description of an unexpected error: its type and stack frames, never its message. */
export function describeBug(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const frames = (error.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)).join('\n');
  return {
    type: error.name,
    code: (error as { code?: unknown }).code,
    kind: error instanceof ScoringError ? error.kind : undefined,
    stack: frames,
  };
}
