#!/usr/bin/env bash
# Run before `docker compose up` / `podman-compose up`: makes sure the images the services you start
# need are on this machine, pulling what is missing, and when a pull fails names the variable that
# points compose at an image this machine can get (a mirror in your registry, an image you built or
# loaded) instead of leaving you with the registry's raw error in the middle of `up`.
#
# Usage: compose/check-images.sh [--env-file FILE] [monitoring] [scale]
#        The profiles you will start; the appliance image is always checked. Exit 0 when every image
#        is here (or was pulled), 1 when one is not, 2 on a usage error.
# Env:   CONVERSATION_RISK_IMAGE, PROMETHEUS_IMAGE, REDIS_IMAGE as compose reads them: the shell's,
#        else the env file's (default: .env beside compose.yaml), else compose.yaml's default.
#        CONTAINER_ENGINE docker or podman (default: the one that answers, see
#        scripts/container/engine.sh).
# Needs nothing but the engine's CLI and the compose.yaml beside it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
env_file="$here/.env"
want=(CONVERSATION_RISK_IMAGE)
while [ $# -gt 0 ]; do
  case "$1" in
    --env-file) env_file="${2:?--env-file needs a file}"; shift 2 ;;
    monitoring) want+=(PROMETHEUS_IMAGE); shift ;;
    scale) want+=(REDIS_IMAGE); shift ;;
    *) echo "usage: $0 [--env-file FILE] [monitoring] [scale]" >&2; exit 2 ;;
  esac
done
# The engine as the other scripts pick it; in a copy of compose/ without the repository beside it,
# CONTAINER_ENGINE, else the first of docker and podman whose engine answers.
if [ -f "$here/../scripts/container/engine.sh" ]; then
  # shellcheck source=../scripts/container/engine.sh
  . "$here/../scripts/container/engine.sh"
  pick_engine
else
  cli="${CONTAINER_ENGINE:-${CONTAINER_CLI:-}}"
  for candidate in docker podman; do
    [ -z "$cli" ] || break
    if command -v "$candidate" >/dev/null 2>&1 && timeout 60 "$candidate" info >/dev/null 2>&1; then cli="$candidate"; fi
  done
  [ -n "$cli" ] || { echo "no container engine answers (docker info, podman info): start one, or set CONTAINER_ENGINE" >&2; exit 1; }
fi

# A variable's value as compose interpolates ${VAR:-default}: the environment (when not empty), then
# the env file, then the default written in compose.yaml.
image_of() {
  local var="$1" value="${!1:-}"
  if [ -z "$value" ] && [ -f "$env_file" ]; then
    value="$(sed -n "s/^[[:space:]]*${var}[[:space:]]*=[[:space:]]*//p" "$env_file" | tail -1)"
    value="${value%\"}" && value="${value#\"}" && value="${value%\'}" && value="${value#\'}"
  fi
  [ -n "$value" ] || value="$(sed -n "s/.*\${${var}:-\([^}]*\)}.*/\1/p" "$here/compose.yaml" | head -1)"
  printf '%s' "$value"
}

hint() {
  case "$1" in
    CONVERSATION_RISK_IMAGE) echo "build it (scripts/container/build-image.sh) or load the release archive" \
      "(scripts/container/verify-release.sh ARCHIVE prints the name it loaded), then set" \
      "CONVERSATION_RISK_IMAGE to that name, or to the image's path in your registry (by digest for production)" ;;
    PROMETHEUS_IMAGE) echo "set PROMETHEUS_IMAGE to your registry's mirror of prom/prometheus (profile monitoring)" ;;
    REDIS_IMAGE) echo "set REDIS_IMAGE to your registry's mirror of a Redis 7 or Valkey image (profile scale)" ;;
  esac
}

failed=0
for var in "${want[@]}"; do
  image="$(image_of "$var")"
  if "$cli" image inspect "$image" >/dev/null 2>&1; then
    echo "ok: $var=$image is on this machine"
    continue
  fi
  echo "$var=$image is not on this machine: pulling it" >&2
  if pull_out="$("$cli" pull "$image" 2>&1 >/dev/null)"; then
    echo "ok: $var=$image pulled"
    continue
  fi
  reason="$(printf '%s\n' "$pull_out" | grep -i '^error' | tail -1 || true)"
  [ -n "$reason" ] || reason="$(printf '%s\n' "$pull_out" | grep -v '^[[:space:]]*$' | tail -1 || true)"
  echo "ERROR: could not pull $image${reason:+ ($reason)}." >&2
  echo "  $(hint "$var"): in the shell, or as $var=... in $env_file" >&2
  failed=1
done
exit "$failed"
