#!/usr/bin/env bash
# Builds the appliance image from the Dockerfile and reports its size.
#
# Usage: scripts/container/build-image.sh [IMAGE]      (default conversation-risk:<package version>)
# Env:   CONTAINER_CLI  docker or podman (default: docker if installed, else podman)
#        BASE_IMAGE     Node 24 Debian base (default: the Dockerfile's node:24-bookworm-slim)
#        VERSION, REVISION, SOURCE   OCI labels (default: package.json version, git HEAD, origin URL)
#        NODE_EXTRA_CA_CERTS / NPM_CA_FILE  CA bundle for the npm registry behind a TLS-intercepting
#                       proxy, passed as the `npm_ca` build secret (never stored in a layer)
set -euo pipefail
cd "$(dirname "$0")/../.."
cli="${CONTAINER_CLI:-$(command -v docker >/dev/null 2>&1 && echo docker || echo podman)}"
version="${VERSION:-$(node -p 'require("./package.json").version')}"
image="${1:-conversation-risk:${version}}"
revision="${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
source_url="${SOURCE:-$(git config --get remote.origin.url 2>/dev/null || true)}"

args=(build -t "$image"
  --build-arg "VERSION=${version}"
  --build-arg "REVISION=${revision}"
  --build-arg "CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)")
[ -n "$source_url" ] && args+=(--build-arg "SOURCE=${source_url}")
[ -n "${BASE_IMAGE:-}" ] && args+=(--build-arg "BASE_IMAGE=${BASE_IMAGE}")
ca="${NPM_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}"
[ -n "$ca" ] && [ -r "$ca" ] && args+=(--secret "id=npm_ca,src=${ca}")
# Podman writes OCI images by default, and the OCI format has no HEALTHCHECK.
[ "$(basename "$cli")" = podman ] && args+=(--format docker)

started=$(date +%s)
"$cli" "${args[@]}" . >&2
size=$("$cli" image inspect --format '{{.Size}}' "$image")
echo "built ${image} in $(( $(date +%s) - started )) s: $(( size / 1000000 )) MB (target < 400 MB)"
