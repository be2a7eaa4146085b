{{/* Names and labels of the chart's objects, as Helm's own starter chart makes them. */}}

{{/* The chart's name: nameOverride, else the chart's. */}}
{{- define "tessera.name" -}}
{{ .Values.nameOverride | default .Chart.Name }}
{{- end }}

{{/* The name of the release's objects: fullnameOverride, else the release's name. Cluster-wide
objects (ClusterRole, ClusterRoleBinding) add the namespace, so that two releases of the same
name in two namespaces do not collide. */}}
{{- define "tessera.fullname" -}}
{{ .Values.fullnameOverride | default .Release.Name }}
{{- end }}

{{- define "tessera.clusterName" -}}
{{ include "tessera.fullname" . }}-{{ .Release.Namespace }}
{{- end }}

{{/* Selector labels: name and instance, so that two releases never select each other's pods. */}}
{{- define "tessera.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tessera.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Every object's labels: the selector labels and Helm's recommended ones. */}}
{{- define "tessera.labels" -}}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{ include "tessera.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: scheduler
{{- end }}

{{/* The ServiceAccount: serviceAccount.name, else the release's objects' name. */}}
{{- define "tessera.serviceAccountName" -}}
{{- if .Values.serviceAccount.name }}{{ .Values.serviceAccount.name }}{{ else }}{{ include "tessera.fullname" . }}{{ end }}
{{- end }}

{{/* Where the leader-election Lease lives: leaseNamespace, else the release's namespace (as
Kueue and KAI keep theirs). */}}
{{- define "tessera.leaseNamespace" -}}
{{ .Values.config.leaderElection.leaseNamespace | default .Release.Namespace }}
{{- end }}
