#!/usr/bin/env bash
# The project-local Python environment that trains, exports and evaluates the model, from the
# hash-pinned lock (requirements/train.lock); prints its interpreter's path on stdout.
#
#   PY="$(bash scripts/train/venv.sh)"      # .venv, made once per lock; a changed lock remakes it
#
# So a fresh machine gets the same files as the machine that trained the shipped model.
# PYTHON_BASE picks the interpreter that makes the environment; TRAIN_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
exec bash "$ROOT/scripts/lib/locked-venv.sh" "$ROOT/requirements/train.lock" "${TRAIN_VENV:-$ROOT/.venv}"
