#!/usr/bin/env bash
# Makes the project-local Python environment that trains, exports and evaluates the model, from the
# hash-pinned lock (requirements/train.lock), and prints its interpreter's path on stdout.
#
#   PY="$(bash scripts/train/venv.sh)"      # .venv, made once per lock; a changed lock remakes it
#
# Every package is checked against the lock's hashes and installed as a wheel, so a fresh machine gets
# the same files as the machine that trained the shipped model. PYTHON_BASE picks the interpreter that
# makes the environment (default python3, 3.11 or newer); TRAIN_VENV moves the environment.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${TRAIN_VENV:-$ROOT/.venv}"
LOCK="$ROOT/requirements/train.lock"
STAMP="$VENV/.train-lock.sha256"
want="$(sha256sum "$LOCK" | cut -d' ' -f1)"
if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  echo "$VENV/bin/python"; exit 0
fi
base="${PYTHON_BASE:-python3}"
"$base" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
  echo "venv.sh: $base is $("$base" --version 2>&1); the lock needs Python 3.11 or newer (set PYTHON_BASE)" >&2; exit 3; }
echo "venv.sh: installing requirements/train.lock into $VENV (a few minutes, once)" >&2
rm -f "$STAMP"
"$base" -m venv --clear "$VENV" >&2
# --no-deps: the lock already lists every dependency, each with its hashes (pip needs all of them).
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes --no-deps \
  --only-binary=:all: -r "$LOCK" >&2
echo "$want" > "$STAMP"
echo "$VENV/bin/python"
