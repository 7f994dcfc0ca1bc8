#!/usr/bin/env bash
# Builds the appliance image from the Dockerfile and reports its size.
#
# Usage: [VAR=value ...] scripts/container/build-image.sh [IMAGE]   (default conversation-risk:<package version>)
# Env:   CONTAINER_ENGINE  docker or podman (default: the one whose engine answers, see engine.sh;
#                       CONTAINER_CLI is the older name)
#        BASE_IMAGE     Node 24 Debian base, passed as --build-arg BASE_IMAGE and recorded in the
#                       org.opencontainers.image.base.name label (default: the Dockerfile's
#                       node:24-bookworm-slim). Pulled first when this machine lacks it; a failed
#                       pull stops the script with a message naming BASE_IMAGE.
#        VERSION, REVISION  OCI labels (default: package.json version, git HEAD)
#        SOURCE         org.opencontainers.image.source (default: package.json "repository" when it
#                       is a URL; without one the label is left out rather than set to a local path)
#        NODE_EXTRA_CA_CERTS / NPM_CA_FILE  CA bundle for the npm registry behind a TLS-intercepting
#                       proxy, passed as the `npm_ca` build secret (never stored in a layer)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=engine.sh
. scripts/container/engine.sh
pick_engine
version="${VERSION:-$(node -p 'require("./package.json").version')}"
image="${1:-conversation-risk:${version}}"
revision="${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
# package.json "repository": "git+https://host/x.git", "github:owner/x" or { "url": ... }; only an
# http(s) URL is meaningful in the label.
source_url="${SOURCE:-$(node -p '
  const r = require("./package.json").repository;
  const u = String((typeof r === "object" && r !== null ? r.url : r) ?? "").replace(/^git\+/, "").replace(/\.git$/, "");
  /^https?:\/\//.test(u) ? u : ""')}"

args=(build -t "$image"
  --build-arg "VERSION=${version}"
  --build-arg "REVISION=${revision}"
  --build-arg "CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)")
[ -n "$source_url" ] && args+=(--label "org.opencontainers.image.source=${source_url}")
[ -n "${BASE_IMAGE:-}" ] && args+=(--build-arg "BASE_IMAGE=${BASE_IMAGE}")
ca="${NPM_CA_FILE:-${NODE_EXTRA_CA_CERTS:-}}"
[ -n "$ca" ] && [ -r "$ca" ] && args+=(--secret "id=npm_ca,src=${ca}")
case "$(basename "$cli")" in
  # Podman writes OCI images by default, and the OCI format has no HEALTHCHECK.
  podman) args+=(--format docker) ;;
  # The Dockerfile's RUN --mount (secret, cache) needs BuildKit, which `docker build` uses only
  # through the buildx plugin; the legacy builder fails on it ("unknown flag: --secret").
  docker) "$cli" buildx version >/dev/null 2>&1 \
    || { echo "docker build needs the buildx plugin (BuildKit): install docker-buildx-plugin, or use CONTAINER_ENGINE=podman" >&2; exit 1; } ;;
esac

# The base image, when this machine lacks it, is pulled before the build: a pull that fails half-way
# through the build shows only the registry's raw error (e.g. "lookup registry-1.docker.io: no such
# host"); failing here names the setting that points the build at an image this machine can get.
base="${BASE_IMAGE:-$(sed -n 's/^ARG BASE_IMAGE=//p' Dockerfile | head -1)}"
if ! "$cli" image inspect "$base" >/dev/null 2>&1; then
  echo "base image $base is not on this machine: pulling it" >&2
  if ! pull_out="$("$cli" pull "$base" 2>&1 >/dev/null)"; then
    reason="$(printf '%s\n' "$pull_out" | grep -i '^error' | tail -1 || true)"
    [ -n "$reason" ] || reason="$(printf '%s\n' "$pull_out" | grep -v '^[[:space:]]*$' | tail -1 || true)"
    cat >&2 <<EOF
ERROR: could not pull the base image $base${reason:+ ($reason)}.
Set BASE_IMAGE to a Node 24 Debian image this machine has or can pull (e.g. your registry's mirror
of node:24-bookworm-slim), or, with no registry at all, build one from the Debian mirror (Podman):
  scripts/container/build-base-image.sh
  BASE_IMAGE=localhost/node24-bookworm-base scripts/container/build-image.sh
(docs/deployment.md, "Build without a registry")
EOF
    exit 1
  fi
fi

started=$(date +%s)
"$cli" "${args[@]}" . >&2
size=$("$cli" image inspect --format '{{.Size}}' "$image")
echo "built ${image} with ${cli} in $(( $(date +%s) - started )) s: $(( size / 1000000 )) MB (target < 400 MB)"
