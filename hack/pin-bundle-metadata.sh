#!/usr/bin/env bash
# Makes `make bundle` deterministic. operator-sdk generate bundle stamps the CSV annotation
# createdAt with the current time on every run; replace it with the createdAt of the CSV base
# (config/manifests/bases/*.clusterserviceversion.yaml; bump it there when releasing), and set
# the containerImage annotation to the operator image the bundle deploys. With ICON, also checks
# that the CSV base's spec.icon is that SVG file (the catalog's package icon), base64-encoded.
# Usage: hack/pin-bundle-metadata.sh BUNDLE_CSV BASE_CSV IMAGE [ICON]
set -euo pipefail
csv=$1 base=$2 image=$3 icon=${4:-}

if [ -n "$icon" ]; then
  want=$(base64 <"$icon" | tr -d '\n')
  have=$(awk '/^  - base64data: / { print $3; exit }' "$base")
  if [ "$want" != "$have" ]; then
    echo "pin-bundle-metadata: spec.icon of $base is not $icon; set its base64data to: base64 < $icon | tr -d '\\n'" >&2; exit 1
  fi
fi

created=$(awk '/^    createdAt: / { v = $2; gsub(/["\047]/, "", v); print v; exit }' "$base")
if [ -z "$created" ]; then
  echo "pin-bundle-metadata: no metadata.annotations.createdAt in $base" >&2; exit 1
fi
for key in createdAt containerImage; do
  if ! grep -q "^    $key: " "$csv"; then
    echo "pin-bundle-metadata: no metadata.annotations.$key in $csv" >&2; exit 1
  fi
done
awk -v created="$created" -v image="$image" '
  /^    createdAt: /      { print "    createdAt: \"" created "\""; next }
  /^    containerImage: / { print "    containerImage: " image; next }
  { print }' "$csv" >"$csv.tmp"
mv "$csv.tmp" "$csv"
