// train.sh names a model after the released recipe it trains, and refuses, before any work, to give a
// released name or the shipped model's directory to anything else: a package labelled 3.11.0 must be
// 3.11.0's recipe.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { shippedRecipe } from '../helpers/training.ts';

const dir = mkdtempSync(join(tmpdir(), 'train-version-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * train.sh with `args`; PYTHON=/bin/false stops it at its first real step (exit 3, "lacks torch"),
 * which it reaches only once the options, the version and the output are settled.
 */
function trainSh(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync('bash', ['scripts/train/train.sh', '--work', join(dir, 'work'), ...args], {
    env: { ...process.env, PYTHON: '/bin/false' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr };
}
const OUT = ['--out', join(dir, 'out')];

/** The parse loop's own list of options that leave the recipe alone (every other option changes it). */
const ALLOW_LINE = /^ {4}(-[-a-z0-9|]+)\) ;;$/m;

/** train.sh's options as its parse loop lists them, with whether each changes the recipe and takes a value. */
function parsedOptions(): Array<{ option: string; changes: boolean; takesValue: boolean }> {
  const sh = readFileSync(new URL('../../scripts/train/train.sh', import.meta.url), 'utf8');
  const start = sh.indexOf('while [[ $# -gt 0 ]]; do');
  const loop = sh.slice(start, sh.indexOf('\ndone\n', start));
  const allowed = (ALLOW_LINE.exec(loop)?.[1] ?? '').split('|');
  return [...loop.replace(ALLOW_LINE, '').matchAll(/^ {4}(-[-a-z0-9|]+)\)(.*)$/gm)].flatMap(([, names, body]) =>
    (names as string).split('|').map((option) => ({ option, changes: !allowed.includes(option), takesValue: /shift 2/.test(body as string) })),
  );
}

/** Options besides the recipe settings' own switches that leave the recipe alone. */
const NOT_THE_RECIPE = ['--smoke', '--out', '--work', '--version', '--no-eval', '-h', '--help', '--recipe', '--member-args', '--member-from'];

const SHIPPED_SETTINGS = shippedRecipe().settings;

describe('train.sh: versions and output', () => {
  const options = parsedOptions();

  it('classifies every option it parses: it changes the recipe, or it is one of the few that do not', () => {
    expect(options.length).toBeGreaterThan(20);
    expect(options.filter((o) => !o.changes).map((o) => o.option).sort()).toEqual([...NOT_THE_RECIPE].sort());
  });

  it.each(options.filter((o) => o.changes).map((o) => [o.option, o.takesValue]))(
    'refuses %s without --version, naming the option (takes a value: %s)',
    (option, takesValue) => {
      const r = trainSh([...OUT, option as string, ...(takesValue ? ['1'] : [])]);
      expect(r.stderr).toContain(`no released model is trained with ${option as string}; name it with --version`);
      expect(r.status).toBe(2);
    },
  );

  it('reads every setting of the shipped recipe, so the cases below cover them all', () => {
    expect(SHIPPED_SETTINGS.length).toBeGreaterThan(10);
  });

  it.each(SHIPPED_SETTINGS)('takes the recipe setting %s as a switch named after it, which alone makes no other model (value %s)', (key, value) => {
    const option = `--${key.toLowerCase().replaceAll('_', '-')}`;
    // The shipped recipe's own value: still the shipped model, so no --version and no --out are asked for.
    const flag = key === 'TEXTING' || key === 'PHRASINGS';
    const r = trainSh(flag ? (value === '1' ? [option] : []) : [option, value]);
    expect(r.stderr).toContain('lacks torch or onnx');
    expect(r.status).toBe(3);
  });

  it.each([['--asl', '999'], ['--members', '3'], ['--daily', '10'], ['--peers', '10'], ['--contacts', '10']])('counts a recipe switch given another value as another recipe (%s %s)', (option, value) => {
    const r = trainSh([...OUT, option, value]);
    expect(r.stderr).toContain('no released model is of');
    expect(r.status).toBe(2);
  });

  it('names members trained differently, and each option once', () => {
    const r = trainSh([...OUT, '--view-rate', '0.8', '--prefix-weight', '0.5', '--view-rate', '0.5', '--member-args', '2:--view-rate 0.8']);
    expect(r.stderr).toContain('no released model is trained with --member-args --prefix-weight --view-rate;');
    expect(r.status).toBe(2);
  });

  it('names a run that takes a member from a package as another model, though the rest is the recipe', () => {
    // The shipped model's blind member beside a member trained here is no release, whatever it is named after.
    const r = trainSh([...OUT, '--member-from', '2:models/conversation-risk']);
    expect(r.stderr).toContain('no released model is trained with --member-from; name it with --version');
    expect(r.status).toBe(2);
    expect(trainSh([...OUT, '--member-from', '2:models/conversation-risk', '--version', '3.12.0']).stderr).toContain('3.12.0 is no model trained with --member-from');
  });

  it.each([[['--errands', '700']], [['--members', '3']], [['--friends', '700']], [['--repetitive', '1000']], [['--strangers', '500']], [['--recipe', '3.5.0', '--texting']], [['--phrasings']], [['--recipe', '3.4.0', '--errands', '1500', '--members', '1']], [['--checkpoint', 'val-loss']], [['--view-one-line-rate', '0.5']], [['--epochs', '11']], [['--blind-members', '2']], [['--turn-piece-tokens', '16']], [['--teacher-members', '2']], [['--teacher', '0.25']], [['--side-ages', '0.25']], [['--recipe', '3.4.0', '--fit-weights', '1']], [['--written-windows', '5']], [['--written-windows-flat', '0']], [['--written-contacts', '5']], [['--written-contacts-flat', '1']], [['--written-window-batches', '2']]])(
    'refuses a mix of the released slices that no release has (%j)',
    (args) => {
      const r = trainSh([...OUT, ...args]);
      expect(r.stderr).toMatch(/no released model is of \d network\(s\) with \d+ errand, \d+ repetitive, \d+ friends', \d+ strangers', \d+ courtship, \d+ ride, \d+ benign age-stated, \d+ teen daily, \d+ peers' long and \d+ peers' contact chats, texting \d, training phrasings \d, teacher [\d.]+ for \d+ member\(s\), one-line flat views [\d.]+, epoch kept [a-z-]+, \d+ epochs, \d+ reading blind, \d+-token turn pieces, side ages [\d.]+, MiniLM's words for \d+ member\(s\), members' weights (equal|fitted on validation), written windows x\d+ with speakers and x\d+ flat of \d batch\(es\), written contacts x\d+ with speakers and x\d+ flat; name it with --version/);
      expect(r.status).toBe(2);
    },
  );

  it.each([[['--view-rate', '0.8', '--version', '3.5.0']], [['--epochs', '11', '--version', '3.5.0']], [['--errands', '0', '--version', '3.5.0']], [['--members', '1', '--minilm-words', '1', '--fit-weights', '0', '--version', '3.4.0']], [['--smoke', '--version', '3.5.0']]])(
    "refuses a released version's name for another recipe (%j)",
    (args) => {
      const r = trainSh([...OUT, ...args]);
      expect(r.stderr).toMatch(/is no model .*; name it otherwise/);
      expect(r.status).toBe(2);
    },
  );

  it("refuses to write a model of its own over the shipped one: it needs --out", () => {
    const r = trainSh(['--vocab', 'wordpiece', '--version', 'x']);
    expect(r.stderr).toContain('x is no released model; give --out');
    expect(r.status).toBe(2);
  });

  it.each([
    [[]],
    [['--recipe', '3.5.0', '--errands', '0']],
    [['--recipe', '3.5.0', '--errands', '0', '--members', '1']],
    [['--recipe', '3.5.0', '--errands', '0', '--version', '3.4.0']],
    [['--recipe', '3.4.0']],
    [['--recipe', '3.5.0']],
    [['--recipe', '3.5.0', '--friends', '1500', '--strangers', '3000', '--courtship', '3000', '--texting', '--view-one-line-rate', '0.75', '--checkpoint', 'last', '--blind-members', '1', '--turn-piece-tokens', '8', '--version', '3.6.0']],
    [['--recipe', '3.6.0']],
    [['--courtship', '3000', '--asl', '0', '--daily', '0', '--peers', '0', '--contacts', '0', '--friends', '1500', '--teacher', '0', '--teacher-members', '0', '--side-ages', '0', '--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.6.0']],
    [['--recipe', '3.7.0']],
    [['--courtship', '6000', '--asl', '0', '--daily', '0', '--peers', '0', '--contacts', '0', '--friends', '1500', '--teacher', '0', '--teacher-members', '0', '--side-ages', '0', '--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.7.0']],
    [['--courtship', '6000', '--asl', '1000', '--daily', '0', '--peers', '0', '--contacts', '0', '--teacher', '0', '--teacher-members', '0', '--side-ages', '0', '--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.8.0']],
    [['--recipe', '3.8.0', '--asl', '2000', '--daily', '1500', '--version', '3.9.0']],
    [['--recipe', '3.8.0']],
    [['--courtship', '6000', '--asl', '2000', '--peers', '0', '--contacts', '0', '--teacher', '0', '--teacher-members', '0', '--side-ages', '0', '--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.9.0']],
    [['--recipe', '3.9.0', '--courtship', '9000', '--asl', '3000', '--peers', '2000', '--contacts', '2000', '--version', '3.10.0']],
    [['--recipe', '3.9.0']],
    [['--recipe', '3.10.0']],
    [['--recipe', '3.10.0', '--teacher', '0.5', '--teacher-members', '1', '--version', '3.11.0']],
    [['--recipe', '3.11.0']],
    [['--recipe', '3.11.0', '--side-ages', '0.5', '--version', '3.12.0']],
    [['--side-ages', '0', '--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.11.0']],
    [['--recipe', '3.12.0']],
    [['--recipe', '3.12.0', '--minilm-words', '1', '--version', '3.13.0']],
    [['--recipe', '3.13.0']],
    [['--recipe', '3.13.0', '--minilm-words', '2', '--version', '3.14.0']],
    [['--recipe', '3.14.0']],
    [['--recipe', '3.14.0', '--fit-weights', '1', '--version', '3.15.0']],
    [['--recipe', '3.15.0', '--fit-weights', '0', '--version', '3.14.0']],
    [['--recipe', '3.15.0']],
    [['--recipe', '3.15.0', '--written-windows', '3', '--written-windows-flat', '3', '--version', '3.16.0']],
    [['--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.15.0']],
    [['--recipe', '3.16.0']],
    [['--recipe', '3.16.0', '--written-contacts', '3', '--written-contacts-flat', '3', '--version', '3.17.0']],
    [['--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.16.0']],
    [['--recipe', '3.17.0']],
    [['--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.14.0']],
    [['--minilm-words', '1', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.13.0']],
    [['--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.12.0']],
    [['--teacher', '0', '--teacher-members', '0', '--side-ages', '0', '--minilm-words', '0', '--fit-weights', '0', '--written-windows', '0', '--written-windows-flat', '0', '--written-contacts', '0', '--written-contacts-flat', '0', '--version', '3.10.0']],
    [['--recipe', '3.7.0', '--asl', '1000', '--friends', '3000', '--version', '3.8.0']],
    [['--recipe', '3.6.0', '--courtship', '6000', '--version', '3.7.0']],
    [['--recipe', '3.4.0', '--version', '3.4.0']],
    [['--epochs', '9']],
    [['--recipe', '3.5.0', '--members', '1', '--errands', '0']],
    [['--vocab', 'wordpiece', '--version', 'x', ...OUT]],
    [['--smoke', '--view-rate', '0.8', ...OUT]],
    [['--teacher', '0.5', '--teacher-members', '1', '--version', 'x', ...OUT]],
    [['--written-window-batches', '2', '--version', 'x', ...OUT]],
    [['--written-window-batches', '3', '--version', 'x', ...OUT]],
  ])('goes on with a released recipe, or a named one with its own directory (%j)', (args) => {
    const r = trainSh(args);
    expect(r.stderr).toContain('lacks torch or onnx');
    expect(r.status).toBe(3);
  });

  it.each([
    [['--checkpoint', 'best'], '--checkpoint is val-loss or last, not best'],
    [['--view-one-line-rate', '2'], '--view-one-line-rate takes a share from 0 to 1 (0.5), not 2'],
    [['--view-one-line-rate', '0.50'], '--view-one-line-rate takes a share from 0 to 1 (0.5), not 0.50'],
    [['--epochs', '0'], '--epochs takes a positive whole number, not 0'],
    [['--epochs', '09'], '--epochs takes a positive whole number, not 09'],
    [['--turn-piece-tokens', '0'], '--turn-piece-tokens takes a positive whole number, not 0'],
    [['--blind-members', '3'], '--blind-members 3 is more than the 2 member(s)'],
    [['--teacher', 'half'], '--teacher takes a weight (0: none; 0.5), not half'],
    [['--teacher', '0.50'], '--teacher takes a weight (0: none; 0.5), not 0.50'],
    [['--teacher-members', '0'], '--teacher 0.5 teaches no member: give --teacher-members (1 to 2)'],
    [['--teacher', '0'], '--teacher-members 1 with --teacher 0 teaches nothing'],
    [['--teacher', '0.5', '--teacher-members', '3'], '--teacher-members 3 is more than the 2 member(s)'],
    [['--teacher-members', 'one'], '--teacher-members takes a whole number, not one'],
    [['--member-args', '2:--teacher-weight 0'], '--member-args may not set --teacher-weight'],
    [['--member-from', 'models/conversation-risk'], '--member-from is K:PACKAGE_DIR, not models/conversation-risk'],
    [['--member-from', `2:${dir}`], `--member-from: ${dir} is no model package`],
    [['--member-from', '3:models/conversation-risk'], '--member-from names member 3 of 2 (it joins an ensemble)'],
    [['--members', '1', '--minilm-words', '1', '--fit-weights', '0', '--member-from', '1:models/conversation-risk'], '--member-from names member 1 of 1 (it joins an ensemble)'],
    // The shipped recipe's members all read MiniLM's words (MINILM_WORDS 2): one member cannot.
    [['--members', '1'], '--minilm-words 2 is more than the 1 member(s)'],
    [['--member-from', '2:models/conversation-risk', '--member-args', '2:--lr 0.002'], 'member 2 is taken from a package (--member-from): it is not trained'],
    [['--member-from', '1:models/conversation-risk', '--member-from', '2:models/conversation-risk'], '--member-from takes every member: nothing would be trained'],
    [['--vocab', 'wordpiece', '--minilm-words', '1'], '--minilm-words reads whole words\' vectors: it needs --vocab hybrid'],
    [['--minilm-words', '3'], '--minilm-words 3 is more than the 2 member(s)'],
    [['--fit-weights', 'yes'], '--fit-weights is 0 or 1, not yes'],
    [['--written-window-batches', '4'], '--written-window-batches is 1, 2 or 3, not 4'],
    [['--written-window-batches', '0'], '--written-window-batches is 1, 2 or 3, not 0'],
    [['--recipe', '3.15.0', '--written-window-batches', '2'], '--written-window-batches 2 reads no windows: give --written-windows or --written-windows-flat'],
    [['--members', '1', '--minilm-words', '1', '--blind-members', '0', '--teacher-members', '0', '--teacher', '0', '--fit-weights', '1'], '--fit-weights 1 weighs an ensemble\'s members: it needs --members 2 or more'],
  ])('refuses a value the recipe setting does not take, before any work (%j)', (args, message) => {
    const r = trainSh([...OUT, '--version', 'x', ...args]);
    expect(r.stderr).toContain(message);
    expect(r.status).toBe(2);
  });

  it.each(['TEXTING=2', 'PHRASINGS=yes', 'EPOCHS=0'])('refuses a recipe file whose setting takes no such value (%s)', (line) => {
    // A switch set to 2 would train as on and be named as another recipe; it is refused instead.
    const recipes = fileURLToPath(new URL('../../scripts/train/recipes', import.meta.url));
    writeFileSync(join(dir, 'bad.env'), `${line}\n`);
    const r = trainSh([...OUT, '--version', 'x', '--recipe', relative(recipes, join(dir, 'bad'))]);
    expect(r.stderr).toContain(`${line} is no recipe setting`);
    expect(r.status).toBe(2);
  });

  it.each([[['--recipe', 'nope']], [['--recipe']]])('refuses a recipe that has no file (%j)', (args) => {
    const r = trainSh(args);
    expect(r.stderr).toContain('train.sh: no recipe');
    expect(r.status).toBe(2);
  });

  it("names a run after the recipe file whose settings it has, so the recipes are the releases' one list", () => {
    const r = trainSh([...OUT, '--recipe', '3.3.0', '--version', '3.4.0']);
    expect(r.stderr).toContain('3.4.0 is no model of 1 network(s) with 0 errand');
    expect(r.status).toBe(2);
  });
});
