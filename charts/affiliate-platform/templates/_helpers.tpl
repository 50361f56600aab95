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
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | quote }}
app.kubernetes.io/name: {{ include "ap.name" . | quote }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
{{- with .Values.commonLabels }}
{{ include "ap.quotedMap" . }}
{{- end }}
{{- end -}}

{{/*
A map of labels or annotations with every key and value quoted: toYaml leaves a string such as 693645627081e612
bare, which YAML then reads as a number, and Kubernetes takes only strings there.
*/}}
{{- define "ap.quotedMap" -}}
{{- $lines := list -}}
{{- range $key, $value := . -}}
{{- $lines = append $lines (printf "%s: %s" ($key | quote) ($value | toString | quote)) -}}
{{- end -}}
{{- join "\n" $lines -}}
{{- end -}}

{{/* Selector labels of one service's pods; call with (dict "root" $ "service" "gateway"). */}}
{{- define "ap.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ap.name" .root | quote }}
app.kubernetes.io/instance: {{ .root.Release.Name | quote }}
app.kubernetes.io/component: {{ .service | quote }}
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
{{- /* The NATS chart writes the release name bare into its labels, where YAML would read such a name as no string. */ -}}
{{- if regexMatch "^(([0-9]+|[0-9]*[.][0-9]+|[0-9]+[.][0-9]*)(e[-+]?[0-9]+)?|0x[0-9a-f]+|0o[0-7]+|true|false|yes|no|on|off|y|n|null)$" .Release.Name -}}
{{- fail (printf "release name %q: with nats.enabled the NATS chart puts it unquoted in its labels, where YAML reads it as a number or a boolean; choose another name" .Release.Name) -}}
{{- end -}}
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
