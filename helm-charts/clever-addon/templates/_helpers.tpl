{{- /* Labels every published object carries: the user's first, the operator's last (they win). */ -}}
{{- define "clever-addon.labels" -}}
{{- range $k, $v := .Values.secret.labels }}
{{ $k | quote }}: {{ $v | quote }}
{{- end }}
app.kubernetes.io/name: {{ .Values.component }}
app.kubernetes.io/instance: {{ .Values.crName }}
app.kubernetes.io/part-of: clever-operator
api.clever-cloud.com/managed-by: clever-operator
api.clever-cloud.com/kind: {{ .Values.component }}
{{- end -}}

{{- define "clever-addon.annotations" -}}
{{- range $k, $v := .Values.secret.annotations }}
{{ $k | quote }}: {{ $v | quote }}
{{- end }}
api.clever-cloud.com/addon-id: {{ .Values.addonId | quote }}
api.clever-cloud.com/credentials-hash: {{ .Values.credentialsHash | quote }}
{{- end -}}
