// What one bench run measures with, from the environment where it says so (BENCH_DURATION_S,
// MODEL_DIR, WORKERS): every step reads these.
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MODEL_DIR } from '../../src/config.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Requests in flight, for the server and the in-process engine alike. */
export const CONCURRENCY = 16;
export const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** Alternating rounds (server, then in-process) of the paced CPU comparison. */
export const PACED_ROUNDS = 3;
export const MODEL_DIR = process.env.MODEL_DIR ?? DEFAULT_MODEL_DIR;
export const WORKERS = Number(process.env.WORKERS ?? availableParallelism());

/** What each step of the bench returns: figures by name, for bench.json's `results`. */
export type Figures = Record<string, number>;
