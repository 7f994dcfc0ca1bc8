#!/usr/bin/env bash
# Fuzzes the running service from its own OpenAPI document with Schemathesis (CI runs it after
# `npm test`). Starts the real server (src/main.ts on the bundled Node 24) as production runs it: HTTPS
# with a self-signed certificate, one known API key, the contract fixture model; then every operation of
# GET /openapi.json gets its examples, its schema's boundaries (coverage) and generated valid and invalid
# requests (fuzzing), with the key. It fails on any
#   - 5xx answer (not_a_server_error);
#   - answer whose status, content type, headers or body the document does not declare for it
#     (status_code_conformance, content_type_conformance, response_headers_conformance,
#     response_schema_conformance): every error answer is documented as `{detail, code}`, so any other shape fails;
#   - error line in the server's log (a bug is logged as "request failed"), or a server that died.
#
#   bash scripts/fuzz/schemathesis.sh          # FUZZ_MAX_EXAMPLES (default 300) cases per operation and phase
#   FUZZ_SEED=1234 bash scripts/fuzz/schemathesis.sh    # replay a run (its seed is printed)
#   bash scripts/fuzz/schemathesis.sh --include-path /predict   # more arguments go to `schemathesis run`
#
# Each failure is printed with a curl line that reproduces it. The JUnit report and the server log go
# to .tmp/fuzz/; no NDJSON or HAR report, no crash cache (schemathesis.toml): they record every
# generated body, gigabytes of boundary-length strings. Nor are response values captured for reuse:
# with them the stateful phase grew past 9 GB (schemathesis.toml). The Python environment comes from
# requirements/fuzz.lock (scripts/fuzz/venv.sh, .venv-fuzz). Exit status: Schemathesis's, or 1 when the
# server logged an error or died.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="$ROOT/.tmp/fuzz"
mkdir -p "$OUT"
rm -rf "$OUT/server.log" "$OUT/server.stderr" "$OUT/junit.xml"

ST="$(bash scripts/fuzz/venv.sh)"
NODE="$ROOT/node_modules/.bin/node"
[[ -x "$NODE" ]] || { echo "schemathesis.sh: $NODE is missing: run npm ci first" >&2; exit 3; }

KEY="fuzz-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-300}"
SEED="${FUZZ_SEED:-$(( (RANDOM << 15) | RANDOM ))}"

# The real entry point with npm start's memory flags, on loopback, any free port, no redirect or metrics
# listener. The rate limit is
# far above what the run sends (its 429 is tested elsewhere); jobs are bounded so the run's own job
# submissions cannot queue minutes of scoring behind the fuzzer. A job holds at most 2 conversations
# (JOB_MAX_ITEMS, which the document's maxItems follows, so the boundary is still fuzzed at 2 and 3):
# Schemathesis 4.32.5 keeps every case of an operation and its whole request body until the operation
# ends, and with 20 its POST /v2/predict/batch cases (each up to 20 conversations of oversized
# messages) grew past 12 GB (CI killed it, seed 127314503); with 2, four seeds peaked at 0.2 to 1.1 GB.
env -i PATH="$PATH" HOME="${HOME:-/tmp}" MALLOC_ARENA_MAX=2 \
  HOST=127.0.0.1 PORT=0 HTTP_PORT=0 METRICS_PORT=0 TLS_MODE=on \
  API_KEYS="$KEY" RATE_LIMIT_MAX=1000000 \
  MODEL_DIR="$ROOT/test/fixtures/contract-model" WORKERS=1 LOG_LEVEL=info \
  JOB_MAX_ITEMS=2 JOB_MAX_QUEUED_PER_KEY=1000 \
  "$NODE" --max-semi-space-size=2 --heap-growing-percent=20 src/main.ts >"$OUT/server.log" 2>"$OUT/server.stderr" &
server=$!
stop_server() {
  if kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
}
trap stop_server EXIT

# The port the OS chose, from the server's "listening" log line.
url=""
for _ in $(seq 1 600); do
  url="$(grep -o '"url":"https://[^"]*"' "$OUT/server.log" 2>/dev/null | head -1 | cut -d'"' -f4 || true)"
  [[ -n "$url" ]] && break
  kill -0 "$server" 2>/dev/null || { echo "schemathesis.sh: the server exited at start:" >&2; cat "$OUT/server.stderr" "$OUT/server.log" >&2; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { echo "schemathesis.sh: the server did not say where it listens within 60 s" >&2; exit 1; }
echo "schemathesis.sh: fuzzing $url/openapi.json (seed $SEED, up to $MAX_EXAMPLES cases per operation and phase)" >&2

# One worker: the server scores on one thread anyway, and with two, Schemathesis 4.32 gave some
# operations a handful of fuzzing cases instead of MAX_EXAMPLES. FUZZ_TIMEOUT_S bounds the whole run.
# Hypothesis's own caches (character tables) go under .tmp too, not into a .hypothesis/ of the tree.
set +e
HYPOTHESIS_STORAGE_DIRECTORY="$OUT/hypothesis" timeout "${FUZZ_TIMEOUT_S:-900}" "$ST" --config-file scripts/fuzz/schemathesis.toml run "$url/openapi.json" \
  --header "Authorization: Bearer $KEY" \
  --tls-verify false \
  --checks "${FUZZ_CHECKS:-not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance}" \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "$MAX_EXAMPLES" \
  --seed "$SEED" \
  --workers 1 \
  --request-timeout 30 \
  --generation-database none \
  --report junit --report-junit-path "$OUT/junit.xml" \
  --no-color \
  "$@"
status=$?
set -e
[[ $status -ne 124 ]] || echo "schemathesis.sh: the run took longer than ${FUZZ_TIMEOUT_S:-900} s (FUZZ_TIMEOUT_S)" >&2
[[ $status -ne 137 ]] || echo "schemathesis.sh: Schemathesis was killed (SIGKILL: out of memory?); its own memory, not the server's (schemathesis.toml)" >&2

if ! kill -0 "$server" 2>/dev/null; then
  echo "schemathesis.sh: the server died during the run:" >&2
  tail -n 20 "$OUT/server.stderr" "$OUT/server.log" >&2
  status=1
fi
# pino levels: 50 error, 60 fatal. A bug answered 500 is logged "request failed" with its stack frames.
if grep -q '"level":[56]0' "$OUT/server.log"; then
  echo "schemathesis.sh: the server logged errors during the run:" >&2
  grep '"level":[56]0' "$OUT/server.log" | head -n 20 >&2
  [[ $status -ne 0 ]] || status=1
fi
echo "schemathesis.sh: exit $status (seed $SEED; reports in ${OUT#"$ROOT/"})" >&2
exit $status
