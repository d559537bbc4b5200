{{/* Chart name, truncated to a DNS label. */}}
{{- define "clever-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the prefix of every resource name. */}}
{{- define "clever-operator.fullname" -}}
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

{{/* A name derived from the full name that must stay a DNS label (63 characters). */}}
{{- define "clever-operator.suffixedName" -}}
{{- $ctx := index . 0 }}{{ $suffix := index . 1 }}
{{- printf "%s-%s" (include "clever-operator.fullname" $ctx | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{- define "clever-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "clever-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "clever-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "clever-operator.labels" -}}
helm.sh/chart: {{ include "clever-operator.chart" . }}
{{ include "clever-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: clever-operator
{{- end }}

{{- define "clever-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "clever-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "clever-operator.managerRoleName" -}}
{{- include "clever-operator.fullname" . }}-manager
{{- end }}

{{- define "clever-operator.image" -}}
{{- $img := .Values.image }}
{{- if $img.digest }}
{{- printf "%s@%s" $img.repository $img.digest }}
{{- else }}
{{- printf "%s:%s" $img.repository (default (printf "v%s" (trimPrefix "v" .Chart.AppVersion)) $img.tag) }}
{{- end }}
{{- end }}

{{/*
The created credentials Secret's keys: environment variable => value name under
.Values.credentials.
*/}}
{{- define "clever-operator.credentialKeys" -}}
CLEVER_OPERATOR_API_TOKEN: token
CLEVER_OPERATOR_API_SECRET: secret
CLEVER_OPERATOR_API_CONSUMER_KEY: consumerKey
CLEVER_OPERATOR_API_CONSUMER_SECRET: consumerSecret
CLEVER_OPERATOR_API_BEARER_TOKEN: bearerToken
CLEVER_OPERATOR_API_ENDPOINT: endpoint
CLEVER_OPERATOR_API_BRIDGE_ENDPOINT: bridgeEndpoint
CLEVER_OPERATOR_API_TOKEN_EXPIRATION: tokenExpiration
{{- end }}

{{/*
Name of the Secret the operator reads its credentials from; fails rendering with a message
saying what to set when the credentials values are incomplete or contradictory.
*/}}
{{- define "clever-operator.credentialsSecretName" -}}
{{- $c := .Values.credentials }}
{{- if and $c.existingSecret $c.create }}
{{- fail "credentials: set either credentials.existingSecret or credentials.create=true, not both" }}
{{- else if $c.existingSecret }}
{{- $c.existingSecret }}
{{- else if $c.create }}
{{- $token := trim (toString (default "" $c.token)) }}
{{- $secret := trim (toString (default "" $c.secret)) }}
{{- $consumerKey := trim (toString (default "" $c.consumerKey)) }}
{{- $consumerSecret := trim (toString (default "" $c.consumerSecret)) }}
{{- /* A lone token is a bearer token, as in the operator's configuration. */}}
{{- $bearer := or (trim (toString (default "" $c.bearerToken))) (and $token (not (or $secret $consumerKey $consumerSecret))) }}
{{- /* Token and secret, with both consumer values or neither (clever-tools' published pair). */}}
{{- $oauth1 := and $token $secret (eq (not $consumerKey) (not $consumerSecret)) }}
{{- if not (or $bearer $oauth1) }}
{{- fail "credentials: credentials.create=true needs credentials.bearerToken (or credentials.token alone, read as a bearer token like the Rust operator did), or credentials.token and credentials.secret (with both credentials.consumerKey and credentials.consumerSecret, or neither for clever-tools' published consumer) (pass them with --set-string or a values file)" }}
{{- end }}
{{- include "clever-operator.suffixedName" (list . "credentials") }}
{{- else if $c.cleverToolsSecret }}
{{- /* Credentials from clever-tools' login file only: no environment Secret. */}}
{{- else }}
{{- /* The default: a Secret the user creates, so the credentials never go through Helm values. */}}
{{- include "clever-operator.defaultCredentialsSecret" . }}
{{- end }}
{{- end }}

{{/* The Secret read when no credentials value is set (created by the user, not by the chart). */}}
{{- define "clever-operator.defaultCredentialsSecret" -}}
clever-operator-credentials
{{- end }}

{{/* True (non-empty) when the operator reads the default Secret, which may not exist yet. */}}
{{- define "clever-operator.usesDefaultCredentialsSecret" -}}
{{- $c := .Values.credentials }}
{{- if not (or $c.existingSecret $c.create $c.cleverToolsSecret) }}true{{ end }}
{{- end }}

{{- define "clever-operator.managerNamespacedRoleName" -}}
{{- include "clever-operator.fullname" . }}-manager-namespaced
{{- end }}

{{- define "clever-operator.metricsReaderRoleName" -}}
{{- include "clever-operator.fullname" . }}-metrics-reader
{{- end }}
