{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "dbperf-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, with the chart name appended unless it already contains it. */}}
{{- define "dbperf-operator.fullname" -}}
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

{{- define "dbperf-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dbperf-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "dbperf-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "dbperf-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "dbperf-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "dbperf-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "dbperf-operator.managerRoleName" -}}
{{- printf "%s-manager" (include "dbperf-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "dbperf-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "dbperf-operator.runnerImage" -}}
{{- printf "%s:%s" .Values.runnerImage.repository (default .Chart.AppVersion .Values.runnerImage.tag) }}
{{- end }}
