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
set -euo pipefail
image="${1:?usage: $0 IMAGE|ARCHIVE [EXPECTED_IMAGE_ID] [PUBLISHED_MANIFEST_JSON]}"
expected_id="${2:-}"
published_manifest="${3:-}"
# shellcheck source=engine.sh
. "$(dirname "$0")/engine.sh"
pick_engine

if [ -f "$image" ]; then
  archive="$image"
  # gzip's magic number is 1f 8b.
  if [ "$(head -c 2 "$archive" | od -An -tx1 | tr -d ' \n')" = 1f8b ]; then
    loaded="$(gunzip -c "$archive" | "$cli" load)"
  else
    loaded="$("$cli" load -i "$archive")"
  fi
  echo "$loaded"
  # docker: "Loaded image: NAME" or "Loaded image ID: sha256:..."; podman: "Loaded image: NAME" or
  # "Loaded image(s): NAME,NAME". The first image of the archive is the one checked.
  image="$(printf '%s\n' "$loaded" | sed -n 's/^Loaded image[^:]*: *//p' | head -1 | cut -d, -f1)"
  [ -n "$image" ] || { echo "FAIL: $archive: no image loaded"; exit 1; }
  echo "archive $archive: loaded $image"
fi

id="$("$cli" image inspect --format '{{.Id}}' "$image")"
id="sha256:${id#sha256:}"
echo "image $image: id $id"
if [ -n "$expected_id" ]; then
  [ "$id" = "sha256:${expected_id#sha256:}" ] || { echo "FAIL: image id differs from the published $expected_id"; exit 1; }
  echo "OK: image id matches the published one"
fi

check_model='
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
const dir = process.env.MODEL_DIR;
const manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8"));
let bad = 0;
for (const [name, want] of Object.entries(manifest.files)) {
  const got = createHash("sha256").update(readFileSync(path.join(dir, name))).digest("hex");
  const ok = got === want.sha256;
  if (!ok) bad++;
  console.log(`${ok ? "OK  " : "FAIL"} ${name} sha256 ${got}`);
}
console.log(`model ${manifest.name} ${manifest.version}`);
console.log(`manifest.json sha256 ${createHash("sha256").update(readFileSync(path.join(dir, "manifest.json"))).digest("hex")}`);
process.exit(bad === 0 ? 0 : 1);
'
out="$("$cli" run --rm --network none --read-only --cap-drop ALL --entrypoint node "$image" \
  --input-type=module -e "$check_model")" || { echo "$out"; echo "FAIL: model files do not match manifest.json"; exit 1; }
echo "$out"

if [ -n "$published_manifest" ]; then
  want="$(sha256sum "$published_manifest" | cut -d' ' -f1)"
  got="$(printf '%s\n' "$out" | sed -n 's/^manifest.json sha256 //p')"
  [ "$want" = "$got" ] || { echo "FAIL: the image's manifest.json differs from $published_manifest"; exit 1; }
  echo "OK: manifest.json matches the published one"
fi
echo "verified"
