// npm run build:console: bundles the review console's TypeScript (console/src/) into the one script
// the appliance serves, src/console/public/console.js, which is checked in so that the image build
// needs nothing beyond `npm ci --omit=dev` (README "Review console"). esbuild, minified, no source
// map, the same bytes for the same sources: test/console/console-route.test.ts rebuilds it in memory
// and fails when the checked-in file differs. `--check` does the same here and exits 1.
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const CONSOLE_ENTRY = fileURLToPath(new URL('../../console/src/main.ts', import.meta.url));
export const CONSOLE_BUNDLE = fileURLToPath(new URL('../../src/console/public/console.js', import.meta.url));

const BANNER = '/* Review console. Built by `npm run build:console` from console/src/: do not edit. */';

/** The bundle's text, as `npm run build:console` writes it. */
export async function bundleConsole(): Promise<string> {
  const result = await build({
    entryPoints: [CONSOLE_ENTRY],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['chrome120', 'firefox120', 'safari17'],
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    charset: 'utf8',
    banner: { js: BANNER },
    logLevel: 'silent',
  });
  const out = result.outputFiles[0];
  if (out === undefined) throw new Error('esbuild wrote no bundle');
  return out.text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const text = await bundleConsole();
  if (process.argv.includes('--check')) {
    const current = readFileSync(CONSOLE_BUNDLE, 'utf8');
    if (current !== text) {
      console.error(`${CONSOLE_BUNDLE} is not what console/src/ builds: run npm run build:console`);
      process.exit(1);
    }
    console.log(`${CONSOLE_BUNDLE} is up to date (${Buffer.byteLength(text)} bytes)`);
  } else {
    writeFileSync(CONSOLE_BUNDLE, text);
    console.log(`wrote ${CONSOLE_BUNDLE} (${Buffer.byteLength(text)} bytes)`);
  }
}
