#!/usr/bin/env bash
# Lints and renders the chart with every example values file, and validates the manifests against
# the Kubernetes schemas. Needs helm (and kubeconform for the schema check); when a tool is missing
# it says so and skips that part (exit 0), since the static checks in test/deployment/helm-chart.test.ts run
# everywhere. Set HELM_CHECK_REQUIRED=1 to make a missing tool an error (release pipelines).
#
# Usage: scripts/helm/check.sh [KUBERNETES_VERSION]   (default 1.29.0)
set -euo pipefail
cd "$(dirname "$0")/../.."
chart=helm/conversation-risk
kube_version="${1:-1.29.0}"
required="${HELM_CHECK_REQUIRED:-0}"

missing() {
  echo "$1 not installed: skipped$2"
  if [ "$required" = 1 ]; then exit 1; fi
}

# Without helm on PATH, the pinned helm 4 that test/deployment/helm-render.test.ts extracts (and checks) is used.
if ! command -v helm >/dev/null 2>&1 && [ -x .tmp/helm/helm ]; then
  PATH="$PWD/.tmp/helm:$PATH"
fi
if ! command -v helm >/dev/null 2>&1; then
  missing helm " (helm lint, helm template, kubeconform)"
  exit 0
fi

value_sets=("")
for f in "$chart"/ci/*.yaml; do value_sets+=("$f"); done

status=0
for values in "${value_sets[@]}"; do
  label="${values:-defaults}"
  args=()
  [ -n "$values" ] && args=(-f "$values")
  echo "== helm lint --strict ($label)"
  helm lint --strict "$chart" "${args[@]}" || status=1
  rendered="$(mktemp)"
  echo "== helm template ($label)"
  if helm template ci-release "$chart" --namespace ci --kube-version "$kube_version" "${args[@]}" >"$rendered"; then
    if command -v kubeconform >/dev/null 2>&1; then
      # CRDs (ServiceMonitor, PrometheusRule, Certificate) are checked when their schemas are
      # reachable (KUBECONFORM_SCHEMA_LOCATION), skipped otherwise.
      schema_args=(-schema-location default)
      [ -n "${KUBECONFORM_SCHEMA_LOCATION:-}" ] && schema_args+=(-schema-location "$KUBECONFORM_SCHEMA_LOCATION")
      kubeconform -strict -summary -ignore-missing-schemas -kubernetes-version "$kube_version" \
        "${schema_args[@]}" "$rendered" || status=1
    else
      missing kubeconform " (rendered manifests not validated against Kubernetes schemas)"
    fi
  else
    status=1
  fi
  rm -f "$rendered"
done
exit $status
