import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One temporary directory per run, removed at its end (test/helpers/scratch-dir.ts).
    globalSetup: ['test/helpers/scratch-dir.ts'],
    // Several suites start real servers, worker pools and ONNX sessions; on a 2-core machine
    // running files one at a time keeps timings honest and avoids oversubscribing the CPU.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
