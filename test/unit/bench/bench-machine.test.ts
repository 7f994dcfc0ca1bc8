// The bench names the machine kind, not only "2 cores, AMD EPYC": two 2-core machines measured the same
// model three times apart, and a model name names no generation; the CPU family, model and vector
// flags do.
import { describe, expect, it } from 'vitest';
import { cpuKind, describeMachine, machineLine } from '../../../scripts/bench/machine.ts';

// Two processors as /proc/cpuinfo lists them (flags shortened): the second one's fields must not leak in.
const ZEN1 = `processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 23
model\t\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse sse2 avx fma avx2 bmi2

processor\t: 1
vendor_id\t: GenuineIntel
cpu family\t: 6
model\t\t: 143
flags\t\t: avx2 avx512f avx512_vnni amx_tile
`;

describe('bench: the machine kind', () => {
  it("takes the first processor's vendor, family, model and vector flags", () => {
    expect(cpuKind(ZEN1)).toEqual({ cpu_kind: 'AuthenticAMD family 23 model 1', vector_flags: ['avx2', 'fma'] });
  });

  it('tells an AVX-512 machine from an AVX2 one', () => {
    const spr = ZEN1.split('\n\n')[1] as string;
    expect(cpuKind(spr)).toEqual({ cpu_kind: 'GenuineIntel family 6 model 143', vector_flags: ['avx2', 'avx512f', 'avx512_vnni', 'amx_tile'] });
  });

  it('gives no kind where the text names no vendor (not Linux)', () => {
    expect(cpuKind('')).toEqual({});
    expect(machineLine({ cpus: 2, cpu_model: 'Apple M2' })).toBe('2 x Apple M2');
  });

  it('prints the kind beside the model name', () => {
    expect(machineLine({ cpus: 2, cpu_model: 'AMD EPYC', ...cpuKind(ZEN1) })).toBe('2 x AMD EPYC (AuthenticAMD family 23 model 1; avx2 fma)');
  });

  it('describes this machine with at least its core count and model name', () => {
    const m = describeMachine();
    expect(m.cpus).toBeGreaterThan(0);
    expect(m.cpu_model.length).toBeGreaterThan(0);
  });
});
