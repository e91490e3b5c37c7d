{{/*
The eight services of a country, in start order. Every one runs from the same image as
`node apps/<service>/dist/main.js`; only the gateway has an HTTP port.
*/}}
{{- define "dcr.serviceNames" -}}
residency-router decisions receipts audit-chain webhooks oidc mcp-gateway gateway
{{- end }}

{{- define "dcr.name" -}}
{{- .Chart.Name | trunc 40 | trimSuffix "-" }}
{{- end }}

{{/*
Release-scoped name, short enough to take "-residency-router" and stay within 63 characters.
*/}}
{{- define "dcr.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "dcr.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels; called with (dict "root" $ "component" "<service>").
*/}}
{{- define "dcr.selectorLabels" -}}
app.kubernetes.io/name: {{ include "dcr.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
All labels; called with (dict "root" $ "component" "<service>").
*/}}
{{- define "dcr.labels" -}}
helm.sh/chart: {{ include "dcr.chart" .root }}
{{ include "dcr.selectorLabels" . }}
app.kubernetes.io/part-of: decision-consent-receipt-service
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
country: {{ include "dcr.country" .root }}
{{- end }}

{{- define "dcr.country" -}}
{{- $country := .Values.country | default "" | toString | upper }}
{{- if not (regexMatch "^[A-Z]{2}$" $country) }}
{{- fail (printf "country must be an ISO 3166-1 alpha-2 code such as US or DE (got %q)" .Values.country) }}
{{- end }}
{{- $country }}
{{- end }}

{{- define "dcr.region" -}}
{{- $region := .Values.region | default "" | toString | lower }}
{{- if not (regexMatch "^[a-z]{2,8}$" $region) }}
{{- fail (printf "region must be 2 to 8 lower-case letters such as us or eu (got %q)" .Values.region) }}
{{- end }}
{{- $region }}
{{- end }}

{{/*
PEER_COUNTRIES: upper-case, without this country, comma-separated.
*/}}
{{- define "dcr.peerCountries" -}}
{{- $country := include "dcr.country" . }}
{{- $peers := list }}
{{- range .Values.peerCountries }}
{{- $peer := . | toString | upper }}
{{- if not (regexMatch "^[A-Z]{2}$" $peer) }}
{{- fail (printf "peerCountries must be ISO 3166-1 alpha-2 codes (got %q)" .) }}
{{- end }}
{{- if ne $peer $country }}
{{- $peers = append $peers $peer }}
{{- end }}
{{- end }}
{{- $peers | uniq | join "," }}
{{- end }}

{{- define "dcr.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion | toString }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/*
Effective values of one service: services.<name> over serviceDefaults. Called with
(dict "root" $ "name" "<service>"); returns YAML for fromYaml.
*/}}
{{- define "dcr.serviceValues" -}}
{{- $own := index .root.Values.services .name | default dict }}
{{- $merged := merge (deepCopy $own) (deepCopy .root.Values.serviceDefaults) }}
{{- /* merge treats 0 as unset; an explicit replicas: 0 must scale the service down. */}}
{{- if hasKey $own "replicas" }}
{{- $_ := set $merged "replicas" $own.replicas }}
{{- end }}
{{- $merged | toYaml }}
{{- end }}

{{/*
Fails on names under .Values.services that are not services of this chart (typos would otherwise
be silently ignored).
*/}}
{{- define "dcr.validateServices" -}}
{{- $known := splitList " " (include "dcr.serviceNames" .) }}
{{- range $name, $_ := .Values.services }}
{{- if not (has $name $known) }}
{{- fail (printf "services.%s is not a service of this chart; known: %s" $name (join ", " $known)) }}
{{- end }}
{{- end }}
{{- end }}
