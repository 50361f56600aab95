{{/* Object names: <release>-<chart>, shortened to Kubernetes' 63 characters. */}}
{{- define "ap.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "ap.fullname" -}}
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

{{- define "ap.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "ap.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one service's pods; call with (dict "root" $ "service" "gateway"). */}}
{{- define "ap.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ap.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .service }}
{{- end -}}

{{- define "ap.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "ap.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "ap.fullname" .) -}}
{{- end -}}

{{/* The NATS URL: the NATS chart's client Service when it is a dependency, else the external URL. */}}
{{- define "ap.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- $name := "" -}}
{{- if .Values.nats.fullnameOverride -}}
{{- $name = .Values.nats.fullnameOverride -}}
{{- else if contains "nats" .Release.Name -}}
{{- $name = .Release.Name -}}
{{- else -}}
{{- $name = printf "%s-nats" .Release.Name -}}
{{- end -}}
{{- printf "nats://%s:4222" ($name | trunc 63 | trimSuffix "-") -}}
{{- else -}}
{{- .Values.externalNats.url -}}
{{- end -}}
{{- end -}}

{{- define "ap.publicBaseUrl" -}}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tlsSecretName "")) .Values.ingress.host -}}
{{- end -}}

{{/* The pod's and the container's security settings: non-root, read-only root filesystem, no privileges. */}}
{{- define "ap.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "ap.containerSecurityContext" -}}
runAsNonRoot: true
readOnlyRootFilesystem: {{ .Values.readOnlyRootFilesystem }}
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The variables every process gets from the Secret: call with the root context. */}}
{{- define "ap.secretEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "ap.secretName" . }}
      key: DATABASE_URL
- name: ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "ap.secretName" . }}
      key: ENCRYPTION_KEY
- name: ENCRYPTION_KEYS_PREVIOUS
  valueFrom:
    secretKeyRef:
      name: {{ include "ap.secretName" . }}
      key: ENCRYPTION_KEYS_PREVIOUS
      optional: true
{{- end -}}

{{- define "ap.scheduling" -}}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
