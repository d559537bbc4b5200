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

{{/*
The manager's image. The Rust operator's image (clevercloud/clever-operator, which
`helm upgrade --reuse-values` from its chart carries over with its tag, a commit of that
operator) cannot run under this chart's command and flags: it is replaced by this chart's
default image (files/default-values.yaml; tag v<appVersion>), and NOTES.txt says so.
*/}}
{{- define "clever-operator.image" -}}
{{- $img := .Values.image }}
{{- if include "clever-operator.isRustImage" . }}
{{- $img = get (.Files.Get "files/default-values.yaml" | fromYaml) "image" }}
{{- end }}
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

{{/*
Run first by every template (generated ones too): makes .Values complete and maps the Rust
operator chart's value names. Idempotent (every template runs it on the same .Values).

1. Fills in, from files/default-values.yaml (a copy of values.yaml, hack/gen-chart.sh), every
   value that is missing. `helm upgrade --reuse-values` renders a chart with the previous
   release's values in place of the chart's values.yaml (helm.sh/helm/v3
   pkg/action/upgrade.go: `chart.Values = oldVals`): after the Rust operator's chart, none of
   this chart's defaults would be there. Only missing keys are added; a value set to false,
   0 or "" stays.
2. Maps the Rust operator chart's values (deployments/kubernetes/helm/values.yaml of
   CleverCloud/clever-operator; docs/migrating-from-rust-operator.md):
   config.token, config.secret, config.consumerKey, config.consumerSecret -> the same names
   under credentials, with credentials.create=true when any is set (fails when a name is set
   both ways with different values, or together with credentials.existingSecret);
   podDisruptionBudget.enabled/.minAvailable -> pdb.enabled/.minAvailable.
The image, resources and networkPolicy.ingress/.egress of that chart are read where they are
used ("clever-operator.image", "clever-operator.resources", networkpolicy.yaml). Its
securityContext (uid 20000, gid 25000) is merged with this chart's like any user value.
*/}}
{{- define "clever-operator.init" -}}
{{- include "clever-operator.checkKubeVersion" . }}
{{- include "clever-operator.fillDefaults" (list .Values (.Files.Get "files/default-values.yaml" | fromYaml)) }}
{{- $c := .Values.credentials }}
{{- $legacy := include "clever-operator.legacyCredentialKeys" . | fromYamlArray }}
{{- range $legacy }}
{{- $old := trim (toString (index $.Values.config .)) }}
{{- $new := trim (toString (default "" (index $c .))) }}
{{- if and $new (ne $old $new) }}
{{- fail (printf "config.%s (the Rust operator chart's name, deprecated) and credentials.%s are both set, to different values: keep credentials.%s only (--set config.%s=)" . . . .) }}
{{- end }}
{{- $_ := set $c . $old }}
{{- end }}
{{- if $legacy }}
{{- if $c.existingSecret }}
{{- fail (printf "config.%s (the Rust operator chart's credentials, deprecated) is set together with credentials.existingSecret: the chart would create a credentials Secret from config.* and not read %s; unset config.* (--set config.token= --set config.secret= --set config.consumerKey= --set config.consumerSecret=) to use the existing Secret, or unset credentials.existingSecret" (first $legacy) $c.existingSecret) }}
{{- end }}
{{- $_ := set $c "create" true }}
{{- end }}
{{- $rustPDB := default dict .Values.podDisruptionBudget }}
{{- if $rustPDB.enabled }}
{{- $min := hasKey $rustPDB "minAvailable" | ternary $rustPDB.minAvailable 1 }}
{{- if and .Values.pdb.enabled (ne (toString .Values.pdb.minAvailable) (toString $min)) }}
{{- fail (printf "podDisruptionBudget.minAvailable (the Rust operator chart's name, deprecated) is %v and pdb.minAvailable is %v: keep pdb.* only (--set podDisruptionBudget.enabled=false)" $min .Values.pdb.minAvailable) }}
{{- end }}
{{- $_ := set .Values.pdb "enabled" true }}
{{- $_ := set .Values.pdb "minAvailable" $min }}
{{- $_ := set .Values.pdb "maxUnavailable" "" }}
{{- end }}
{{- end }}

{{/*
Non-empty when .Capabilities come from a cluster's discovery (helm install and upgrade, with
--dry-run too, helm template --validate), empty for an offline render (helm template, helm
lint), whose API versions are Helm's built-in list: every kube-apiserver serves
apiregistration.k8s.io/v1 (its aggregation layer), which that list lacks.
*/}}
{{- define "clever-operator.capabilitiesFromCluster" -}}
{{- if .Capabilities.APIVersions.Has "apiregistration.k8s.io/v1" }}true{{ end }}
{{- end }}

{{/*
Refuses a cluster older than Kubernetes 1.30 (ValidatingAdmissionPolicy v1, CEL rules of the
CRDs). Chart.yaml has no kubeVersion: Helm would compare it with its offline default (v1.20
for a helm built with `go install`) in every `helm template` and `helm lint` too. So the version
is only checked when it is the cluster's own; an offline render is never refused for it.
*/}}
{{- define "clever-operator.checkKubeVersion" -}}
{{- if and (include "clever-operator.capabilitiesFromCluster" .) (semverCompare "<1.30.0-0" .Capabilities.KubeVersion.Version) }}
{{- fail (printf "clever-operator needs Kubernetes 1.30 or later (ValidatingAdmissionPolicy in admissionregistration.k8s.io/v1); this cluster runs %s" .Capabilities.KubeVersion.Version) }}
{{- end }}
{{- end }}

{{/* Adds to the map (index . 0) every key of (index . 1) it lacks, recursively into maps. */}}
{{- define "clever-operator.fillDefaults" -}}
{{- $dst := index . 0 }}
{{- range $k, $v := index . 1 }}
{{- if not (hasKey $dst $k) }}
{{- $_ := set $dst $k $v }}
{{- else if and (kindIs "map" $v) (kindIs "map" (index $dst $k)) }}
{{- include "clever-operator.fillDefaults" (list (index $dst $k) $v) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Rust operator chart's credential values (config.*) that are set, as a YAML list. */}}
{{- define "clever-operator.legacyCredentialKeys" -}}
{{- $config := default dict .Values.config }}
{{- $set := list }}
{{- range list "token" "secret" "consumerKey" "consumerSecret" }}
{{- if trim (toString (default "" (index $config .))) }}
{{- $set = append $set . }}
{{- end }}
{{- end }}
{{- toYaml $set }}
{{- end }}

{{/* The Rust operator's image repositories (Docker Hub): never run under this chart. */}}
{{- define "clever-operator.isRustImage" -}}
{{- $repo := trimPrefix "index.docker.io/" (trimPrefix "docker.io/" (toString .Values.image.repository)) }}
{{- if eq $repo "clevercloud/clever-operator" }}true{{ end }}
{{- end }}

{{/* The Rust operator chart's default resources. */}}
{{- define "clever-operator.rustDefaults" -}}
resources:
  requests:
    memory: 64M
    cpu: 100m
    ephemeral-storage: 128Mi
  limits:
    memory: 64M
    cpu: 100m
    ephemeral-storage: 128Mi
{{- end }}

{{/*
The manager container's resources (YAML): .Values.resources, except that the Rust operator
chart's defaults (64M of memory, requests = limits), which `helm upgrade --reuse-values`
carries over, are replaced by this chart's (values.yaml, from docs/performance.md).
*/}}
{{- define "clever-operator.resources" -}}
{{- if include "clever-operator.rustResources" . }}
{{- toYaml (get (.Files.Get "files/default-values.yaml" | fromYaml) "resources") }}
{{- else }}
{{- toYaml .Values.resources }}
{{- end }}
{{- end }}

{{- define "clever-operator.rustResources" -}}
{{- if eq (toJson .Values.resources) (toJson (get (include "clever-operator.rustDefaults" . | fromYaml) "resources")) }}true{{ end }}
{{- end }}

{{/*
A memory quantity ("64M", "128Mi", "1Gi", "134217728") in bytes, as an integer; empty when
it cannot be read (an exponent, a fraction of a unit, an empty value).
*/}}
{{- define "clever-operator.bytes" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) }}
{{- /* A plain number (--set, or YAML decoded as JSON numbers): bytes. */}}
{{- int64 . }}
{{- else }}
{{- $q := trim (toString .) }}
{{- $m := regexFind "^[0-9]+" $q }}
{{- if $m }}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 }}
{{- $u := trimPrefix $m $q }}
{{- if hasKey $units $u }}
{{- mul (int64 $m) (index $units $u) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The memory the operator needs at the sizes docs/performance.md measures (P5: a peak RSS of
131 MiB provisioning 1000 resources with 5000 unrelated Secrets; 80 MiB before any work), in
bytes: 150 MiB, the P5 goal. A memory limit below it may be OOM-killed (NOTES.txt warns).
*/}}
{{- define "clever-operator.memoryNeed" -}}
157286400
{{- end }}
