#!/usr/bin/env bash
# Makes the project-local Python environment of the API fuzzer (Schemathesis) from the hash-pinned lock
# (requirements/fuzz.lock), and prints its `schemathesis` command's path on stdout.
#
#   ST="$(bash scripts/fuzz/venv.sh)"      # .venv-fuzz, made once per lock; a changed lock remakes it
#
# Test tooling only, kept apart from the training environment (.venv): every package is checked
# against the lock's hashes and installed as a wheel. PYTHON_BASE picks the interpreter that makes the
# environment (default python3, 3.11 or newer); FUZZ_VENV moves the environment.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${FUZZ_VENV:-$ROOT/.venv-fuzz}"
LOCK="$ROOT/requirements/fuzz.lock"
STAMP="$VENV/.fuzz-lock.sha256"
want="$(sha256sum "$LOCK" | cut -d' ' -f1)"
if [[ -x "$VENV/bin/schemathesis" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  echo "$VENV/bin/schemathesis"; exit 0
fi
base="${PYTHON_BASE:-python3}"
"$base" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
  echo "fuzz/venv.sh: $base is $("$base" --version 2>&1); the lock needs Python 3.11 or newer (set PYTHON_BASE)" >&2; exit 3; }
echo "fuzz/venv.sh: installing requirements/fuzz.lock into $VENV (a minute, once)" >&2
rm -f "$STAMP"
"$base" -m venv --clear "$VENV" >&2
# --no-deps: the lock already lists every dependency, each with its hashes (pip needs all of them).
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes --no-deps \
  --only-binary=:all: -r "$LOCK" >&2
echo "$want" > "$STAMP"
echo "$VENV/bin/schemathesis"
