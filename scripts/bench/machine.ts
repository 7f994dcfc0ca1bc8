// The machine a bench ran on, precisely enough to tell two machine kinds apart. Two 2-core machines
// measured the shipped model at 2,265 (November 29) and at 760 (December 1) forty-turn chats/s in
// process, and the bench had recorded only the core count and a model name such as "AMD EPYC", which
// names no generation; December's is a first-generation EPYC that runs AVX2 as two 128-bit halves and
// has no AVX-512 (README, "Benchmarks"). The figures of two days compare only when these fields agree.
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import VECTOR_FLAG_LIST from '../lib/vector-flags.json' with { type: 'json' };

/** The vector extensions onnxruntime's CPU kernels choose their code path by; one list, which the
 * teacher's table (scripts/train/teacher.py) names its machine kind by too. */
export const VECTOR_FLAGS: readonly string[] = VECTOR_FLAG_LIST.flags;

export interface Machine {
  cpus: number;
  cpu_model: string;
  /** `vendor_id`, `cpu family` and `model` of /proc/cpuinfo's first processor; undefined off Linux. */
  cpu_kind?: string;
  /** Which of VECTOR_FLAGS the first processor has (undefined off Linux). */
  vector_flags?: string[];
}

/** The first processor's `key: value` lines of a /proc/cpuinfo text. */
function firstProcessor(cpuinfo: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of cpuinfo.split('\n')) {
    if (line.trim() === '') {
      if (fields.size > 0) break;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return fields;
}

/** The CPU kind and vector flags a /proc/cpuinfo text gives, or nothing where it names no vendor. */
export function cpuKind(cpuinfo: string): Pick<Machine, 'cpu_kind' | 'vector_flags'> {
  const p = firstProcessor(cpuinfo);
  const vendor = p.get('vendor_id');
  if (vendor === undefined) return {};
  const flags = new Set((p.get('flags') ?? '').split(/\s+/));
  return {
    cpu_kind: `${vendor} family ${p.get('cpu family') ?? '?'} model ${p.get('model') ?? '?'}`,
    vector_flags: VECTOR_FLAGS.filter((f) => flags.has(f)),
  };
}

/** This machine. */
export function describeMachine(): Machine {
  let cpuinfo = '';
  try {
    cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    // Not Linux: the model name alone.
  }
  return { cpus: availableParallelism(), cpu_model: cpus()[0]?.model ?? 'unknown', ...cpuKind(cpuinfo) };
}

/** One line for the bench's header: `2 x AMD EPYC (AuthenticAMD family 23 model 1; avx2 fma)`. */
export function machineLine(m: Machine): string {
  const kind = m.cpu_kind === undefined ? '' : ` (${m.cpu_kind}; ${m.vector_flags?.join(' ') || 'no AVX2'})`;
  return `${m.cpus} x ${m.cpu_model}${kind}`;
}
