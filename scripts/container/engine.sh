# Sourced by build-image.sh and verify-release.sh: sets $cli to the container engine CLI to use.
#
# A CLI being installed is not enough: a docker CLI with no engine behind it (or one talking to
# Podman's Docker API, whose legacy builder has no --secret and no RUN --mount) fails half-way. So
# the engine has to answer: `docker version` reaching a Docker engine, else `podman info`, else a
# docker CLI reaching any engine. CONTAINER_ENGINE=docker|podman (or a path to either) forces one;
# CONTAINER_CLI is the older name for the same setting. Safe under `set -euo pipefail`.
pick_engine() {
  local forced="${CONTAINER_ENGINE:-${CONTAINER_CLI:-}}" docker_server="" docker_err="" podman_err=""
  if [ -n "$forced" ]; then
    case "$(basename "$forced")" in
      docker) docker_err="$(timeout 20 "$forced" version --format '{{.Server.Version}}' 2>&1 >/dev/null)" ;;
      podman) podman_err="$(timeout 60 "$forced" info 2>&1 >/dev/null)" ;;
      *) echo "CONTAINER_ENGINE must be docker or podman, not '$forced'" >&2; return 2 ;;
    esac || { echo "CONTAINER_ENGINE=$forced: its engine does not answer: ${docker_err}${podman_err}" >&2; return 1; }
    cli="$forced"
    return 0
  fi
  if command -v docker >/dev/null 2>&1; then
    # The server's component names: "Engine" for Docker, "Podman Engine" for Podman's Docker API.
    if ! docker_server="$(timeout 20 docker version --format '{{range .Server.Components}}{{.Name}};{{end}}' 2>&1)"; then
      docker_err="$(printf '%s' "$docker_server" | tail -1)"
      docker_server=""
    fi
  else
    docker_err="not installed"
  fi
  if [ -n "$docker_server" ] && [[ "$docker_server" != *Podman* ]]; then cli=docker; return 0; fi
  if command -v podman >/dev/null 2>&1; then
    if podman_err="$(timeout 60 podman info 2>&1 >/dev/null)"; then cli=podman; return 0; fi
    podman_err="$(printf '%s' "$podman_err" | tail -1)"
  else
    podman_err="not installed"
  fi
  if [ -n "$docker_server" ]; then cli=docker; return 0; fi
  echo "no container engine answers (docker: ${docker_err:-no server}; podman: ${podman_err:-?});" \
    "start one, or set CONTAINER_ENGINE=docker|podman" >&2
  return 1
}
