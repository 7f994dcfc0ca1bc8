#!/usr/bin/env bash
# Make Podman usable as a Docker-API engine for testcontainers on a fresh Debian machine.
# Idempotent: installs only what is missing, rewrites the engine config, starts the API service
# only when its socket does not answer. stdout carries only the line to eval (progress goes to
# stderr), so both of these work:
#   eval "$(scripts/container/setup-podman.sh)"        # `--env` is accepted and means the same
#   scripts/container/setup-podman.sh >/dev/null       # just make sure it runs
# Env: PODMAN_SOCK (default /run/podman-test.sock), PODMAN_SERVICE_LOG (/tmp/podman-service.log).
#
# Why these settings: in the CI sandbox crun and systemd cgroups are unavailable and the default
# ulimits cannot be raised, so Podman needs runc, cgroupfs and no default ulimits.
set -euo pipefail

case "${1:-}" in
  ""|--env) ;;
  *) echo "usage: $0 [--env]" >&2; exit 2 ;;
esac

SOCK_PATH="${PODMAN_SOCK:-/run/podman-test.sock}"
LOG_FILE="${PODMAN_SERVICE_LOG:-/tmp/podman-service.log}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

log() { echo "[setup-podman] $*" >&2; }

need=()
for bin in podman runc debootstrap curl openssl; do
  command -v "$bin" >/dev/null 2>&1 || need+=("$bin")
done
# Rootful podman networking and fuse for overlay in nested environments. (openssl: the container test
# makes a certificate as compose/init-secrets.sh does.)
for pkg_bin in slirp4netns:slirp4netns fuse-overlayfs:fuse-overlayfs; do
  command -v "${pkg_bin#*:}" >/dev/null 2>&1 || need+=("${pkg_bin%%:*}")
done
if [ "${#need[@]}" -gt 0 ]; then
  log "installing: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${need[@]}" uidmap iptables ca-certificates >/dev/null
else
  log "podman, runc, debootstrap already installed"
fi

$SUDO mkdir -p /etc/containers
desired='[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"'
if [ "$(cat /etc/containers/containers.conf 2>/dev/null || true)" != "$desired" ]; then
  log "writing /etc/containers/containers.conf"
  printf '%s\n' "$desired" | $SUDO tee /etc/containers/containers.conf >/dev/null
fi

ping_socket() {
  # The Docker API answers GET /_ping with "OK".
  [ -S "$SOCK_PATH" ] && curl -fsS --max-time 3 --unix-socket "$SOCK_PATH" http://d/_ping 2>/dev/null | grep -q OK
}

if ping_socket; then
  log "podman API already answering on $SOCK_PATH"
else
  log "starting podman system service on unix://$SOCK_PATH (log: $LOG_FILE)"
  $SUDO rm -f "$SOCK_PATH"
  # Started from /: the service outlives this checkout, and builds fail ("write child: broken pipe")
  # once the directory it was started in has been deleted.
  # (A backgrounded `cd / && ...` list would keep this script's stdout, which --env's caller reads to EOF.)
  (cd / || exit 1; nohup $SUDO podman system service --time=0 "unix://$SOCK_PATH" >"$LOG_FILE" 2>&1 &)
  for _ in $(seq 1 50); do
    ping_socket && break
    sleep 0.2
  done
  ping_socket || { log "podman API did not come up; see $LOG_FILE"; exit 1; }
fi

echo "export DOCKER_HOST=unix://$SOCK_PATH TESTCONTAINERS_RYUK_DISABLED=true"
