{{/* Chart name, truncated to the 63 characters Kubernetes allows in a label value. */}}
{{- define "conversation-risk.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified name: release-chart, or the release name alone when it already contains the chart name. */}}
{{- define "conversation-risk.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "conversation-risk.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that never change for a release: used in selectors. */}}
{{- define "conversation-risk.selectorLabels" -}}
app.kubernetes.io/name: {{ include "conversation-risk.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "conversation-risk.labels" -}}
helm.sh/chart: {{ include "conversation-risk.chart" . }}
{{ include "conversation-risk.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: conversation-risk
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* metadata.annotations block with the common annotations merged into the given ones. */}}
{{- define "conversation-risk.annotations" -}}
{{- $all := merge (dict) (.extra | default dict) (.context.Values.commonAnnotations | default dict) -}}
{{- if $all -}}
annotations: {{- toYaml $all | nindent 2 }}
{{- end -}}
{{- end -}}

{{- define "conversation-risk.image" -}}
{{- $repo := .Values.image.repository -}}
{{- if .Values.image.registry -}}{{- $repo = printf "%s/%s" .Values.image.registry .Values.image.repository -}}{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repo .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "conversation-risk.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "conversation-risk.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Secret holding the API keys file. */}}
{{- define "conversation-risk.apiKeysSecretName" -}}
{{- default (printf "%s-api-keys" (include "conversation-risk.fullname" .)) .Values.auth.existingSecret -}}
{{- end -}}

{{/* Secret holding the webhook signing secret; empty when no secret is configured. */}}
{{- define "conversation-risk.webhookSecretName" -}}
{{- if .Values.webhooks.existingSecret -}}
{{- .Values.webhooks.existingSecret -}}
{{- else if .Values.webhooks.secret -}}
{{- printf "%s-webhook" (include "conversation-risk.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* TLS secret (tls.crt/tls.key); empty when the pod makes a self-signed certificate. */}}
{{- define "conversation-risk.tlsSecretName" -}}
{{- if .Values.tls.existingSecret -}}
{{- .Values.tls.existingSecret -}}
{{- else if .Values.tls.certManager.enabled -}}
{{- printf "%s-tls" (include "conversation-risk.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* "true" when the pod runs the plain-HTTP listener that redirects to HTTPS; empty otherwise. */}}
{{- define "conversation-risk.httpRedirect" -}}
{{- if and .Values.config.httpRedirect .Values.tls.enabled -}}true{{- end -}}
{{- end -}}

{{- define "conversation-risk.scheme" -}}
{{- if .Values.tls.enabled -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}

{{/* Label that lets a pod in the release namespace through the NetworkPolicy to the API port. */}}
{{- define "conversation-risk.clientLabel" -}}
{{ include "conversation-risk.fullname" . }}-client
{{- end -}}

{{/*
Settings that cannot work together fail the render with a message instead of a broken pod. Every
problem is collected first, so one render lists them all.
*/}}
{{- define "conversation-risk.validate" -}}
{{- $problems := list -}}
{{- if and .Values.tls.certManager.enabled (not .Values.tls.certManager.issuerRef.name) -}}
{{- $problems = append $problems "tls.certManager.enabled needs tls.certManager.issuerRef.name" -}}
{{- end -}}
{{- if and .Values.tls.certManager.enabled .Values.tls.existingSecret -}}
{{- $problems = append $problems "set tls.existingSecret or tls.certManager.enabled, not both" -}}
{{- end -}}
{{- if and (not .Values.tls.enabled) (or .Values.tls.existingSecret .Values.tls.certManager.enabled) -}}
{{- $problems = append $problems "tls.enabled is false: tls.existingSecret and tls.certManager are not used" -}}
{{- end -}}
{{- if .Values.autoscaling.hpa.enabled -}}
{{- if lt (int .Values.autoscaling.hpa.maxReplicas) (int .Values.autoscaling.hpa.minReplicas) -}}
{{- $problems = append $problems "autoscaling.hpa.maxReplicas must be >= minReplicas" -}}
{{- end -}}
{{- if not (or (int .Values.autoscaling.hpa.targetCPU) (int .Values.autoscaling.hpa.targetMemory)) -}}
{{- $problems = append $problems "autoscaling.hpa.enabled needs autoscaling.hpa.targetCPU or autoscaling.hpa.targetMemory above 0 (both are 0: the HPA would have no metric)" -}}
{{- end -}}
{{- end -}}
{{- if and .Values.redis.enabled (not .Values.redis.existingSecret) -}}
{{- $problems = append $problems "redis.enabled needs redis.existingSecret (a Secret with the Redis URL and the encryption key)" -}}
{{- end -}}
{{- if and .Values.redis.enabled .Values.networkPolicy.enabled (empty .Values.redis.egress) (empty .Values.networkPolicy.extraEgress) -}}
{{- $problems = append $problems "redis.enabled with networkPolicy.enabled needs redis.egress (or networkPolicy.extraEgress): the NetworkPolicy would block Redis and no pod would be ready" -}}
{{- end -}}
{{- if gt (int64 .Values.webhooks.retryBaseMs) (int64 .Values.webhooks.maxRetryMs) -}}
{{- $problems = append $problems "webhooks.retryBaseMs must not exceed webhooks.maxRetryMs, the time budget of all of a delivery's retries (the service refuses to start otherwise)" -}}
{{- end -}}
{{- if le (mul (int .Values.terminationGracePeriodSeconds) 1000) (add (mul (int .Values.preStopSleepSeconds) 1000) (int .Values.config.shutdownGraceMs)) -}}
{{- $problems = append $problems "terminationGracePeriodSeconds must exceed preStopSleepSeconds plus config.shutdownGraceMs, or Kubernetes kills pods mid-drain" -}}
{{- end -}}
{{- /* One scoring worker per core of the CPU limit: Node does not see the limit, and more workers than
cores only queue for CPU (the p99 latency grows, throughput does not). Cores ("2", 1.5) or millicores ("1500m"). */ -}}
{{- with .Values.resources.limits.cpu -}}
{{- $cpu := toString . -}}
{{- if regexMatch "^[0-9]+(\\.[0-9]+)?m?$" $cpu -}}
{{- $cores := float64 $cpu -}}
{{- $limit := printf "%s cores" $cpu -}}
{{- if hasSuffix "m" $cpu -}}
{{- $cores = divf (float64 (trimSuffix "m" $cpu)) 1000 -}}
{{- $limit = printf "%s = %v cores" $cpu $cores -}}
{{- end -}}
{{- if gt (float64 $.Values.config.workers) $cores -}}
{{- $problems = append $problems (printf "config.workers (%v) is above resources.limits.cpu (%s): run one scoring worker per core of the CPU limit (Node does not see it); lower config.workers or raise the limit" $.Values.config.workers $limit) -}}
{{- end -}}
{{- else -}}
{{- $problems = append $problems (printf "resources.limits.cpu %q: give cores (\"2\", 1.5) or millicores (\"1500m\"), so config.workers can be checked against it" $cpu) -}}
{{- end -}}
{{- end -}}
{{- /* Monitoring objects without the metrics listener would scrape nothing or alert on nothing: refuse them
rather than drop them. */ -}}
{{- if not .Values.metrics.enabled -}}
{{- range $name := list "serviceMonitor" "prometheusRule" "grafanaDashboard" -}}
{{- if (index $.Values.metrics $name).enabled -}}
{{- $problems = append $problems (printf "metrics.%s.enabled needs metrics.enabled: with metrics.enabled false the pods serve no metrics" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- with .Values.metrics.prometheusRule -}}
{{- if and .enabled (ge (int .certificateExpiryCriticalDays) (int .certificateExpiryWarningDays)) -}}
{{- $problems = append $problems "metrics.prometheusRule.certificateExpiryCriticalDays must be below certificateExpiryWarningDays" -}}
{{- end -}}
{{- end -}}
{{- $ports := dict -}}
{{- $_ := set $ports "containerPorts.https" (int .Values.containerPorts.https) -}}
{{- if include "conversation-risk.httpRedirect" . -}}{{- $_ := set $ports "containerPorts.http" (int .Values.containerPorts.http) -}}{{- end -}}
{{- if .Values.metrics.enabled -}}{{- $_ := set $ports "metrics.containerPort" (int .Values.metrics.containerPort) -}}{{- end -}}
{{- if lt (len (values $ports | uniq)) (len $ports) -}}
{{- $problems = append $problems (printf "the container ports in use must differ: %s" (toJson $ports)) -}}
{{- end -}}
{{- /* The API server refuses a Service with two ports of one number (and protocol). */ -}}
{{- $servicePorts := dict -}}
{{- $_ := set $servicePorts "service.ports.https" (int .Values.service.ports.https) -}}
{{- if include "conversation-risk.httpRedirect" . -}}{{- $_ := set $servicePorts "service.ports.http" (int .Values.service.ports.http) -}}{{- end -}}
{{- if .Values.metrics.enabled -}}{{- $_ := set $servicePorts "service.ports.metrics" (int .Values.service.ports.metrics) -}}{{- end -}}
{{- if lt (len (values $servicePorts | uniq)) (len $servicePorts) -}}
{{- $problems = append $problems (printf "the Service ports in use must differ: %s" (toJson $servicePorts)) -}}
{{- end -}}
{{- with $problems -}}
{{- fail (printf "\n%d problem(s) in the values:\n- %s" (len .) (join "\n- " .)) -}}
{{- end -}}
{{- end -}}
