{{/* Names are truncated to 63 characters: some Kubernetes name fields are DNS labels. */}}
{{- define "secondcron.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "secondcron.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The namespace of every namespaced object: namespaceOverride, else the release's. */}}
{{- define "secondcron.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "secondcron.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "secondcron.selectorLabels" -}}
app.kubernetes.io/name: {{ include "secondcron.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
{{- end }}

{{- define "secondcron.labels" -}}
helm.sh/chart: {{ include "secondcron.chart" . | quote }}
{{ include "secondcron.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: operator
{{- with include "secondcron.commonLabels" . | fromYaml }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* global.commonLabels (a parent chart's) under commonLabels; the chart's own win. */}}
{{- define "secondcron.commonLabels" -}}
{{- $labels := merge (deepCopy (.Values.commonLabels | default dict)) (((.Values.global).commonLabels) | default dict) }}
{{- with $labels }}{{ toYaml . }}{{ end }}
{{- end }}

{{/* imagePullSecrets and global.imagePullSecrets (names or {name}), each name once. */}}
{{- define "secondcron.imagePullSecrets" -}}
{{- $names := list }}
{{- range concat (.Values.imagePullSecrets | default list) (((.Values.global).imagePullSecrets) | default list) }}
{{- $name := . }}
{{- if kindIs "map" . }}{{ $name = .name }}{{ end }}
{{- if not (has $name $names) }}{{ $names = append $names $name }}{{ end }}
{{- end }}
{{- range $names }}
- name: {{ . | quote }}
{{- end }}
{{- end }}

{{/* The pods' PriorityClass: priorityClassName, else global.priorityClassName. */}}
{{- define "secondcron.priorityClassName" -}}
{{- default ((.Values.global).priorityClassName) .Values.priorityClassName }}
{{- end }}

{{- define "secondcron.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "secondcron.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* [registry/]repository(@digest|:tag); global.imageRegistry wins over image.registry. */}}
{{- define "secondcron.image" -}}
{{- $registry := default .Values.image.registry ((.Values.global).imageRegistry) }}
{{- $repository := ternary (printf "%s/%s" $registry .Values.image.repository) .Values.image.repository (ne $registry "") }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
A duration value ("15s", "1500ms", "2m", "1h", or a bare number of seconds, the operator's
syntax) in milliseconds, for the cross-field checks in validate.yaml. The schema already
guarantees the syntax.
*/}}
{{- define "secondcron.durationMs" -}}
{{- $v := toString . }}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $v }}
{{- $unit := trimPrefix $num $v }}
{{- $factor := get (dict "ms" 1 "s" 1000 "" 1000 "m" 60000 "h" 3600000) $unit }}
{{- mulf (float64 $num) $factor }}
{{- end }}

{{/*
The operator's permissions on the objects it schedules, shared by the ClusterRole (all namespaces)
and the per-namespace Roles (watchNamespaces): exactly the verbs it sends, as the API server's audit
log of the integration tests shows (test/integration/helm-install.test.ts). It lists and watches
SecondCronJobs, patches their finalizers and (through the subresource) their status; lists, watches,
creates and deletes the Jobs it owns (a server-side dry run is a create too; get when a create's
answer was lost), and records Events (patch: a repeated Event's count). Nothing else: no update, no
pods, no secrets, no CRDs.
*/}}
{{- define "secondcron.operatorRules" -}}
- apiGroups: ["secondcron.io"]
  resources: ["secondcronjobs"]
  verbs: ["list", "watch", "patch"]
- apiGroups: ["secondcron.io"]
  resources: ["secondcronjobs/status"]
  verbs: ["patch"]
# Setting a controller ownerReference with blockOwnerDeletion on a Job needs this where the
# OwnerReferencesPermissionEnforcement admission plugin is on (an authorization check, not a request).
- apiGroups: ["secondcron.io"]
  resources: ["secondcronjobs/finalizers"]
  verbs: ["update"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "delete"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
{{- end }}

{{/* The ServiceMonitor's namespace (Prometheus' own, if set), where its Secrets are looked up. */}}
{{- define "secondcron.serviceMonitorNamespace" -}}
{{- default (include "secondcron.namespace" .) .Values.metrics.serviceMonitor.namespace -}}
{{- end }}

{{/* ServiceAccount (and token Secret) whose token the ServiceMonitor scrapes /metrics with. */}}
{{- define "secondcron.metricsScraper" -}}
{{- printf "%s-metrics-scraper" (include "secondcron.fullname" .) -}}
{{- end }}

{{/*
With metrics.secure, the kubernetes.io/tls Secret the metrics port serves: metrics.certSecret, or the
one cert-manager writes for metrics.certManager; empty: self-signed at start.
*/}}
{{- define "secondcron.metricsCertSecret" -}}
{{- if .Values.metrics.secure -}}
{{- if and .Values.metrics.certManager.enabled .Values.metrics.certSecret -}}
{{- fail "metrics.certManager.enabled and metrics.certSecret: choose one (cert-manager writes its own Secret, <fullname>-metrics-tls)" -}}
{{- else if .Values.metrics.certManager.enabled -}}
{{- printf "%s-metrics-tls" (include "secondcron.fullname" .) -}}
{{- else -}}
{{- .Values.metrics.certSecret -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/*
The Secret with the serving certificate's CA for the ServiceMonitor: serviceMonitor.caSecret, else
the serving Secret when the ServiceMonitor is in the release namespace (prometheus-operator looks in
the ServiceMonitor's namespace only); a ServiceMonitor elsewhere without caSecret fails the install.
*/}}
{{- define "secondcron.metricsCASecret" -}}
{{- $serving := include "secondcron.metricsCertSecret" . -}}
{{- if .Values.metrics.serviceMonitor.caSecret -}}
{{- .Values.metrics.serviceMonitor.caSecret -}}
{{- else if $serving -}}
{{- if ne (include "secondcron.serviceMonitorNamespace" .) (include "secondcron.namespace" .) -}}
{{- fail (printf "metrics.serviceMonitor.caSecret is needed: the ServiceMonitor is in namespace %s, and prometheus-operator reads its CA Secret there, but the serving certificate's Secret %s is in %s" (include "secondcron.serviceMonitorNamespace" .) $serving (include "secondcron.namespace" .)) -}}
{{- end -}}
{{- $serving -}}
{{- end -}}
{{- end }}

{{/*
The scrape endpoint of the ServiceMonitor and the PodMonitor (everything but the port): with
metrics.secure, HTTPS with the token of <fullname>-metrics-scraper (metrics-scraper.yaml).
*/}}
{{- define "secondcron.metricsEndpoint" -}}
{{- $caSecret := include "secondcron.metricsCASecret" . -}}
path: /metrics
honorLabels: {{ .Values.metrics.serviceMonitor.honorLabels }}
{{- if .Values.metrics.secure }}
scheme: https
{{- if .Values.metrics.serviceMonitor.scraperTokenSecret }}
# Prometheus presents the token of <fullname>-metrics-scraper, bound to <fullname>-metrics-reader
# (metrics-scraper.yaml); prometheus-operator reads the Secret from the monitor's own namespace.
authorization:
  type: Bearer
  credentials:
    name: {{ include "secondcron.metricsScraper" . | quote }}
    key: token
{{- else }}
{{- if not .Values.metrics.readerSubjects }}
{{- fail "metrics.secure with a ServiceMonitor or PodMonitor: Prometheus scrapes with its own ServiceAccount's token, so set metrics.readerSubjects to that ServiceAccount (e.g. [{kind: ServiceAccount, name: prometheus-k8s, namespace: monitoring}]), or metrics.serviceMonitor.scraperTokenSecret=true for a token Secret of the chart's own" }}
{{- end }}
# Prometheus' own ServiceAccount token, as kube-prometheus scrapes the kubelet and the API server;
# metrics.readerSubjects binds that ServiceAccount to <fullname>-metrics-reader. Nothing long-lived.
bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
{{- end }}
tlsConfig:
  {{- if include "secondcron.metricsCertSecret" . }}
  serverName: {{ printf "%s-metrics.%s.svc" (include "secondcron.fullname" .) (include "secondcron.namespace" .) | quote }}
  ca:
    secret:
      name: {{ $caSecret | quote }}
      key: ca.crt
  {{- else }}
  # The certificate is self-signed at start: nothing to verify it against.
  insecureSkipVerify: true
  {{- end }}
{{- end }}
interval: {{ .Values.metrics.serviceMonitor.interval }}
{{- with .Values.metrics.serviceMonitor.scrapeTimeout }}
scrapeTimeout: {{ . }}
{{- end }}
# The alert rules select job="<metrics.jobName>"; without this the job would be the Service (or pod monitor) name.
relabelings:
  - action: replace
    targetLabel: job
    replacement: {{ .Values.metrics.jobName | quote }}
  {{- with .Values.metrics.serviceMonitor.relabelings }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.metrics.serviceMonitor.metricRelabelings }}
metricRelabelings:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
