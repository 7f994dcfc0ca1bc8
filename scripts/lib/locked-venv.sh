#!/usr/bin/env bash
# Makes a project-local Python environment from a hash-pinned lock and prints its interpreter's path on
# stdout; the training (scripts/train/venv.sh) and the fuzzer (scripts/fuzz/venv.sh) environments.
#
#   PY="$(bash scripts/lib/locked-venv.sh requirements/x.lock .venv-x)"   # made once per lock
#
# Every package is checked against the lock's hashes and installed as a wheel, so a fresh machine gets
# the same files as any other. A changed lock remakes the environment. PYTHON_BASE picks the interpreter
# that makes it (default python3, 3.11 or newer).
set -euo pipefail
LOCK="$1"
VENV="$2"
name="$(basename "$LOCK")"
STAMP="$VENV/.${name%.lock}-lock.sha256"
want="$(sha256sum "$LOCK" | cut -d' ' -f1)"
made() { [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; }
made && { echo "$VENV/bin/python"; exit 0; }
# One install per environment at a time, the others waiting for it: two at once (`npm run train` started
# while scripts/train/venv.sh was still installing) each cleared the folder under the other's pip, and
# pip failed on a half-written package (December 2). The lock file lies beside the folder, not in it,
# because `venv --clear` would delete it; it is released when this script exits.
exec 9>"$VENV.install-lock"
flock 9
made && { echo "$VENV/bin/python"; exit 0; }
base="${PYTHON_BASE:-python3}"
"$base" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
  echo "locked-venv.sh: $base is $("$base" --version 2>&1); $name needs Python 3.11 or newer (set PYTHON_BASE)" >&2; exit 3; }
echo "locked-venv.sh: installing $name into $VENV (a few minutes, once)" >&2
rm -f "$STAMP"
"$base" -m venv --clear "$VENV" >&2
# --no-deps: the lock already lists every dependency, each with its hashes (pip needs all of them).
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes --no-deps \
  --only-binary=:all: -r "$LOCK" >&2
echo "$want" > "$STAMP"
echo "$VENV/bin/python"
