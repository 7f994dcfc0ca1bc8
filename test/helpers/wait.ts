// Polling for a condition in tests: resolves with the first defined value `probe` returns.
export async function until<T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 10): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
