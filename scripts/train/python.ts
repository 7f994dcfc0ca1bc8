// The interpreter that trains, exports and evaluates: the project-local environment that
// scripts/train/venv.sh makes from requirements/train.lock, unless PYTHON names another one.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

export const TRAINING_PYTHON = process.env.PYTHON ?? join(ROOT, '.venv/bin/python');

/** What to tell someone whose environment lacks the training stack. */
export const TRAINING_PYTHON_HINT = `${TRAINING_PYTHON} lacks the training stack (run: bash scripts/train/venv.sh)`;
