#!/usr/bin/env bash
# Offline checks an operator runs on an image before deploying it (air-gapped install):
#   0. given the release archive instead of an image name, it loads it first (gzipped or not: Podman
#      4.3's `podman load` cannot read a gzipped archive, so it is always decompressed here),
#   1. the image ID (content digest of its config) matches the one published with the release,
#   2. every model file baked into the image matches the SHA-256 in the image's manifest.json,
#   3. optionally, that manifest.json is byte-identical to the one published with the release.
# Runs the image with no network, read-only, as its own user; uses only node inside the image.
#
# Usage: scripts/container/verify-release.sh IMAGE|ARCHIVE [EXPECTED_IMAGE_ID] [PUBLISHED_MANIFEST_JSON]
#        ARCHIVE: an existing file made by `docker save` / `podman save`, optionally gzipped.
# Env:   CONTAINER_ENGINE docker or podman (default: the one whose engine answers, see engine.sh;
#        CONTAINER_CLI is the older name)
# Exit:  0 verified.
#        1 FAIL: the image is not the published release (its id, a model file or its manifest.json
#          differs, or a model file is missing): treat it as tampered and do not deploy it.
#        2 usage (a missing argument, an unreadable published manifest, a bad CONTAINER_ENGINE).
#        3 ERROR: could not ...: nothing was verified, because the engine, the archive or the image
#          could not be used (no engine, a load that failed, an image that is not there, a container
#          that could not start). The engine's own error follows; this says nothing about the release.
set -euo pipefail
if [ -z "${1:-}" ]; then
  echo "usage: $0 IMAGE|ARCHIVE [EXPECTED_IMAGE_ID] [PUBLISHED_MANIFEST_JSON]" >&2
  exit 2
fi
image="$1"
expected_id="${2:-}"
published_manifest="${3:-}"
if [ -n "$published_manifest" ] && [ ! -r "$published_manifest" ]; then
  echo "cannot read the published manifest $published_manifest" >&2
  exit 2
fi

# The engine's stderr of the step under way, for the message when that step cannot run.
errors="$(mktemp)"
trap 'rm -f "$errors"' EXIT
# could_not STEP [NOTE]: a step that could not run is not a verdict on the release: show the
# engine's messages, then one line naming the step and the engine's own error (its last "Error"
# line, else its last line), and exit 3.
could_not() {
  local reason
  cat "$errors" >&2
  reason="$(grep -i '^error' "$errors" | tail -1 || true)"
  [ -n "$reason" ] || reason="$(grep -v '^[[:space:]]*$' "$errors" | tail -1 || true)"
  echo "ERROR: could not $1: ${reason:-no message from the engine}${2:+ ($2)}" >&2
  exit 3
}

# shellcheck source=engine.sh
. "$(dirname "$0")/engine.sh"
engine_status=0
pick_engine 2>"$errors" || engine_status=$?
# 2: CONTAINER_ENGINE names neither docker nor podman (a usage error); otherwise no engine answers.
if [ "$engine_status" -eq 2 ]; then cat "$errors" >&2; exit 2; fi
[ "$engine_status" -eq 0 ] || could_not "run the image: no container engine"

if [ -f "$image" ]; then
  archive="$image"
  # gzip's magic number is 1f 8b.
  if [ "$(head -c 2 "$archive" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; then
    loaded="$(gunzip -c "$archive" 2>>"$errors" | "$cli" load 2>>"$errors")" || could_not "load the archive" "$archive"
  else
    loaded="$("$cli" load -i "$archive" 2>"$errors")" || could_not "load the archive" "$archive"
  fi
  echo "$loaded"
  # docker: "Loaded image: NAME" or "Loaded image ID: sha256:..."; podman: "Loaded image: NAME" or
  # "Loaded image(s): NAME,NAME". The first image of the archive is the one checked.
  image="$(printf '%s\n' "$loaded" | sed -n 's/^Loaded image[^:]*: *//p' | head -1 | cut -d, -f1)"
  [ -n "$image" ] || { echo "no image in what $cli loaded" >"$errors"; could_not "load the archive" "$archive"; }
  echo "archive $archive: loaded $image"
fi

id="$("$cli" image inspect --format '{{.Id}}' "$image" 2>"$errors")" || could_not "inspect the image" "$image"
id="sha256:${id#sha256:}"
echo "image $image: id $id"
if [ -n "$expected_id" ]; then
  [ "$id" = "sha256:${expected_id#sha256:}" ] || { echo "FAIL: image id differs from the published $expected_id"; exit 1; }
  echo "OK: image id matches the published one"
fi

# The check inside the image tells a mismatch (exit 20, with its "model files:" line) from a check
# that could not run (any other status: the engine's 125-127, Node's own codes), so a container that
# does not start is never reported as tampering. A missing or unreadable file is a mismatch.
mismatch=20
check_model='
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
const dir = process.env.MODEL_DIR;
const sha256 = (file) => createHash("sha256").update(readFileSync(path.join(dir, file))).digest("hex");
// Exit 20 (mismatch in the script around): the files differ. Node and the engines use other codes.
const mismatch = (summary) => {
  console.log(`model files: ${summary}`);
  process.exit(20);
};
if (!dir) mismatch("differ from manifest.json (the image sets no MODEL_DIR)");
let manifest;
try {
  manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8"));
} catch (err) {
  mismatch(`differ from manifest.json (manifest.json: ${err.code ?? err.message})`);
}
if (typeof manifest?.files !== "object" || manifest.files === null) mismatch("differ from manifest.json (it lists no files)");
let bad = 0;
const names = Object.keys(manifest.files);
for (const name of names) {
  let got;
  try {
    got = sha256(name);
  } catch (err) {
    bad++;
    console.log(`FAIL ${name} ${err.code ?? err.message}`);
    continue;
  }
  const ok = got === manifest.files[name]?.sha256;
  if (!ok) bad++;
  console.log(`${ok ? "OK  " : "FAIL"} ${name} sha256 ${got}`);
}
console.log(`model ${manifest.name} ${manifest.version}`);
console.log(`manifest.json sha256 ${sha256("manifest.json")}`);
if (bad > 0) mismatch(`${bad} of ${names.length} differ from manifest.json`);
console.log(`model files: all ${names.length} match manifest.json`);
'
status=0
out="$("$cli" run --rm --no-healthcheck --network none --read-only --cap-drop ALL --entrypoint node "$image" \
  --input-type=module -e "$check_model" 2>"$errors")" || status=$?
[ -z "$out" ] || echo "$out"
if [ "$status" -eq "$mismatch" ] && printf '%s\n' "$out" | grep -q '^model files: .*differ from manifest.json'; then
  echo "FAIL: model files do not match manifest.json"
  exit 1
fi
[ "$status" -eq 0 ] || could_not "run the image" "$cli run exit status $status"
printf '%s\n' "$out" | grep -q '^model files: all [0-9]* match manifest.json$' \
  || { echo "the model check printed no result" >"$errors"; could_not "run the image" "$image"; }

if [ -n "$published_manifest" ]; then
  want="$(sha256sum "$published_manifest" | cut -d' ' -f1)"
  got="$(printf '%s\n' "$out" | sed -n 's/^manifest.json sha256 //p')"
  [ "$want" = "$got" ] || { echo "FAIL: the image's manifest.json differs from $published_manifest"; exit 1; }
  echo "OK: manifest.json matches the published one"
fi
echo "verified"
