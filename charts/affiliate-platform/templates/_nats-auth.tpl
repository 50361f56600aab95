{{- /*
Each service's NATS user and client TLS (docs/NATS-SECURITY.md). The users are `<NATS_PREFIX>-<service>`, their
permissions files/nats-permissions.json: the catalogue's, written by `npm run nats:config -- --chart`, with the prefix
left as `{prefix}` (and `{PREFIX}` in stream names) for the chart to fill in.
*/ -}}

{{/* The Secret holding each service's NATS password under the service's name; empty: the services use no user. */}}
{{- define "ap.natsAuthSecret" -}}
{{- if .Values.nats.enabled -}}
{{- printf "%s-nats-auth" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- .Values.natsAuth.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "ap.natsPrefix" -}}
{{- .Values.commonEnv.NATS_PREFIX | default "aff" -}}
{{- end -}}

{{/* The permissions of every process, by name, for this release's NATS_PREFIX. */}}
{{- define "ap.natsPermissions" -}}
{{- $prefix := include "ap.natsPrefix" . -}}
{{- .Files.Get "files/nats-permissions.json" | replace "{prefix}" $prefix | replace "{PREFIX}" (upper $prefix) -}}
{{- end -}}

{{/* A list of subjects in nats-server's configuration syntax: ["a", "b"]. */}}
{{- define "ap.natsSubjects" -}}
[{{ range $i, $s := . }}{{ if $i }}, {{ end }}{{ quote $s }}{{ end }}]
{{- end -}}

{{/*
The NATS chart's nats-box and helm test pod (values.yaml, nats.natsBox): an operator's read-only view of JetStream,
streams' and consumers' information without their messages, and the test's subject `echo`; replies under an inbox of
its own, so that it reads none of the services' replies. No NATS_PREFIX in its name: the NATS chart renders its pod and
cannot read this chart's values, and the bundled server serves this release alone.
*/}}
{{- define "ap.natsBoxPermissions" -}}
{{- $info := list "$JS.API.INFO" "$JS.API.STREAM.NAMES" "$JS.API.STREAM.LIST" "$JS.API.STREAM.INFO.*" "$JS.API.CONSUMER.NAMES.*" "$JS.API.CONSUMER.LIST.*" "$JS.API.CONSUMER.INFO.*.*" -}}
{{- toJson (dict "publish" (dict "allow" (append $info "echo")) "subscribe" (dict "allow" (list "echo" "_INBOX.nats-box.>")) "allow_responses" true) -}}
{{- end -}}

{{/*
The users of the bundled NATS by their key in the Secret `<release>-nats-auth`: each service's, `<prefix>-<service>`,
and nats-box's while the NATS chart runs it. JSON: {key: {"user": name, "permissions": {...}}}.
*/}}
{{- define "ap.natsUsers" -}}
{{- $prefix := include "ap.natsPrefix" . -}}
{{- $users := dict -}}
{{- range $client, $p := include "ap.natsPermissions" . | fromJson -}}
{{- $_ := set $users $client (dict "user" (printf "%s-%s" $prefix $client) "permissions" $p) -}}
{{- end -}}
{{- if dig "natsBox" "enabled" true .Values.nats -}}
{{- $_ := set $users "nats-box" (dict "user" "nats-box" "permissions" (include "ap.natsBoxPermissions" . | fromJson)) -}}
{{- end -}}
{{- toJson $users -}}
{{- end -}}

{{/*
nats-server's authorization block for these users: call with (dict "root" $ "passwords" (dict key password)).
*/}}
{{- define "ap.natsAuthorization" -}}
{{- $users := include "ap.natsUsers" .root | fromJson -}}
authorization {
  users = [
{{- range $key := keys $users | sortAlpha }}
{{- $p := (index $users $key).permissions }}
    {
      user: {{ (index $users $key).user | quote }}
      password: {{ index $.passwords $key | quote }}
      permissions: {
        publish: { allow: {{ include "ap.natsSubjects" $p.publish.allow }}{{ with $p.publish.deny }}, deny: {{ include "ap.natsSubjects" . }}{{ end }} }
        subscribe: { allow: {{ include "ap.natsSubjects" $p.subscribe.allow }} }
        {{- if $p.allow_responses }}
        allow_responses: true
        {{- end }}
      }
    }
{{- end }}
  ]
}
{{- end -}}

{{/* The NATS variables of one service's container: call with (dict "root" $ "service" "gateway"). */}}
{{- define "ap.natsEnv" -}}
{{- $secret := include "ap.natsAuthSecret" .root -}}
{{- if $secret }}
- name: NATS_USER
  value: {{ printf "%s-%s" (include "ap.natsPrefix" .root) .service | quote }}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ .service }}
{{- end }}
{{- $tls := include "ap.natsTls" .root | fromJson }}
{{- if $tls.secretName }}
- name: NATS_TLS_CA
  value: /etc/nats-tls/ca.crt
{{- if $tls.clientCertificate }}
- name: NATS_TLS_CERT
  value: /etc/nats-tls/tls.crt
- name: NATS_TLS_KEY
  value: /etc/nats-tls/tls.key
{{- end }}
{{- end }}
{{- end -}}

{{/*
The services' NATS TLS. With natsTls.enabled: the CA, and the client certificate, of natsTls.secretName. Else, with
the bundled NATS on TLS (nats.config.nats.tls, the NATS chart's values): the CA of its servers' Secret, and that key
alone, so that the servers' private key never reaches a service's pod. JSON: {"secretName", "items", "clientCertificate"},
or {} without TLS.
*/}}
{{- define "ap.natsTls" -}}
{{- $server := dict -}}
{{- if .Values.nats.enabled -}}
{{- $server = dig "config" "nats" "tls" dict .Values.nats -}}
{{- if and $server.enabled (not $server.secretName) -}}
{{- fail "nats.config.nats.tls.secretName is required with nats.config.nats.tls.enabled: the Secret with the NATS servers' tls.crt, tls.key and ca.crt" -}}
{{- end -}}
{{- if and .Values.natsTls.enabled (not $server.enabled) -}}
{{- fail "natsTls.enabled with the bundled NATS: turn TLS on in its servers too, nats.config.nats.tls.enabled and secretName" -}}
{{- end -}}
{{- end -}}
{{- if .Values.natsTls.enabled -}}
{{- toJson (dict "secretName" (required "natsTls.secretName is required when natsTls.enabled" .Values.natsTls.secretName) "clientCertificate" .Values.natsTls.clientCertificate) -}}
{{- else if $server.enabled -}}
{{- toJson (dict "secretName" $server.secretName "items" (list (dict "key" "ca.crt" "path" "ca.crt")) "clientCertificate" false) -}}
{{- else -}}
{}
{{- end -}}
{{- end -}}

{{- define "ap.natsTlsVolumeMount" -}}
{{- if (include "ap.natsTls" . | fromJson).secretName }}
- name: nats-tls
  mountPath: /etc/nats-tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "ap.natsTlsVolume" -}}
{{- $tls := include "ap.natsTls" . | fromJson }}
{{- if $tls.secretName }}
- name: nats-tls
  secret:
    secretName: {{ $tls.secretName }}
    {{- with $tls.items }}
    items:
      {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}
{{- end -}}
