{{/* The chart's names and shared pieces. */}}
{{- define "a2aflow.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "a2aflow.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "a2aflow.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "a2aflow.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "a2aflow.fullname" .) -}}
{{- end -}}

{{- define "a2aflow.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "a2aflow.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "a2aflow.publicURL" -}}
{{- if .Values.publicURL -}}
{{- .Values.publicURL -}}
{{- else if and .Values.ingress.enabled .Values.ingress.hosts -}}
{{- $host := (first .Values.ingress.hosts).host -}}
{{- if .Values.ingress.tls }}https://{{ $host }}{{ else }}http://{{ $host }}{{ end -}}
{{- end -}}
{{- end -}}

{{/* The pod spec both Deployments share: image, environment, volumes. */}}
{{- define "a2aflow.env" -}}
- name: A2AFLOW_TEMPORAL_ADDR
  value: {{ .Values.temporal.address | quote }}
- name: A2AFLOW_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: A2AFLOW_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
{{- if .Values.temporal.tls.enabled }}
- name: A2AFLOW_TEMPORAL_TLS
  value: "true"
{{- end }}
{{- with .Values.temporal.tls.serverName }}
- name: A2AFLOW_TEMPORAL_TLS_SERVER_NAME
  value: {{ . | quote }}
{{- end }}
{{- if .Values.temporal.tls.secretName }}
- name: A2AFLOW_TEMPORAL_TLS_CA
  value: /etc/a2aflow/temporal-tls/ca.crt
- name: A2AFLOW_TEMPORAL_TLS_CERT
  value: /etc/a2aflow/temporal-tls/tls.crt
- name: A2AFLOW_TEMPORAL_TLS_KEY
  value: /etc/a2aflow/temporal-tls/tls.key
{{- end }}
{{- if .Values.temporal.apiKey.secretName }}
- name: A2AFLOW_TEMPORAL_API_KEY_FILE
  value: /etc/a2aflow/temporal-api-key/{{ .Values.temporal.apiKey.secretKey }}
{{- end }}
{{- with .Values.payloadStore }}
- name: A2AFLOW_PAYLOAD_STORE
  value: {{ . | quote }}
{{- end }}
{{- with (include "a2aflow.publicURL" .) }}
- name: A2AFLOW_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- range $k, $v := .Values.env }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end -}}

{{- define "a2aflow.volumes" -}}
- name: data
  emptyDir: {}
- name: tmp
  emptyDir: {}
{{- if .Values.config }}
- name: config
  configMap:
    name: {{ include "a2aflow.fullname" . }}
{{- end }}
{{- with .Values.temporal.tls.secretName }}
- name: temporal-tls
  secret:
    secretName: {{ . }}
{{- end }}
{{- with .Values.temporal.apiKey.secretName }}
- name: temporal-api-key
  secret:
    secretName: {{ . }}
{{- end }}
{{- end -}}

{{- define "a2aflow.volumeMounts" -}}
- name: data
  mountPath: /data
- name: tmp
  mountPath: /tmp
{{- if .Values.config }}
- name: config
  mountPath: /etc/a2aflow/config
  readOnly: true
{{- end }}
{{- if .Values.temporal.tls.secretName }}
- name: temporal-tls
  mountPath: /etc/a2aflow/temporal-tls
  readOnly: true
{{- end }}
{{- if .Values.temporal.apiKey.secretName }}
- name: temporal-api-key
  mountPath: /etc/a2aflow/temporal-api-key
  readOnly: true
{{- end }}
{{- end -}}

{{- define "a2aflow.configArgs" -}}
{{- if .Values.config }}["--config", "/etc/a2aflow/config/a2aflow.toml"]{{ else }}[]{{ end -}}
{{- end -}}
