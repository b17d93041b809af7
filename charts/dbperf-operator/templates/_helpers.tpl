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
{{- include "dbperf-operator.remap" (list (printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag)) .Values.imageRegistry) }}
{{- end }}

{{- define "dbperf-operator.runnerImage" -}}
{{- include "dbperf-operator.remap" (list (printf "%s:%s" .Values.runnerImage.repository (default .Chart.AppVersion .Values.runnerImage.tag)) .Values.imageRegistry) }}
{{- end }}

{{- /*
remap: (list image registry) is the image with its registry replaced by
registry, keeping the repository's path, tag and digest; Docker Hub's
one-component names are library/ ones. The manager's --image-registry does
the same to its default images (internal/specs/images.go, RemapImage);
an empty registry leaves the image as it is.
*/}}
{{- define "dbperf-operator.remap" -}}
{{- $ref := index . 0 -}}
{{- $registry := trimSuffix "/" (index . 1) -}}
{{- if $registry -}}
{{- $rhost := first (splitList "/" $registry) -}}
{{- if not (or (contains "." $rhost) (contains ":" $rhost) (eq $rhost "localhost")) -}}
{{- fail (printf "imageRegistry %q: its host %q has no \".\" or \":\" and is not localhost, so an image under it would be read as Docker Hub's" $registry $rhost) -}}
{{- end -}}
{{- $parts := splitList "/" $ref -}}
{{- $host := "docker.io" -}}
{{- $path := $ref -}}
{{- if and (gt (len $parts) 1) (or (contains "." (first $parts)) (contains ":" (first $parts)) (eq (first $parts) "localhost")) -}}
{{- $host = first $parts -}}
{{- $path = join "/" (rest $parts) -}}
{{- end -}}
{{- if and (has $host (list "docker.io" "index.docker.io")) (not (contains "/" $path)) -}}
{{- $path = printf "library/%s" $path -}}
{{- end -}}
{{- printf "%s/%s" $registry $path -}}
{{- else -}}
{{- $ref -}}
{{- end -}}
{{- end }}

{{/*
The Prometheus source's settings file: telemetry.prometheus without the
two values that are flags of their own.
*/}}
{{- define "dbperf-operator.prometheusSettings" -}}
{{- omit .Values.telemetry.prometheus "url" "settleTime" | toYaml }}
{{- end }}
