#!/usr/bin/env bash
# The project-local Python environment of the API fuzzer (Schemathesis), from the hash-pinned lock
# (requirements/fuzz.lock), kept apart from the training environment (.venv); prints its
# `schemathesis` command's path on stdout.
#
#   ST="$(bash scripts/fuzz/venv.sh)"      # .venv-fuzz, made once per lock; a changed lock remakes it
#
# PYTHON_BASE picks the interpreter that makes the environment; FUZZ_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
py="$(bash "$ROOT/scripts/lib/locked-venv.sh" "$ROOT/requirements/fuzz.lock" "${FUZZ_VENV:-$ROOT/.venv-fuzz}")"
echo "$(dirname "$py")/schemathesis"
