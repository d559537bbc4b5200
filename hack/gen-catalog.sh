#!/usr/bin/env bash
# Builds the file-based catalog (FBC) of `make catalog` from the local bundle/ directory, with
# no container engine and no registry access:
#   <catalog>/<package>/index.yaml = olm.package (opm init, with the icon)
#                                  + one olm.channel per channel, listing the bundle
#                                  + the olm.bundle rendered by `opm render ./bundle`.
# `opm render` of a directory leaves the bundle's image empty; it is set to BUNDLE_IMG (the image
# `make bundle-build bundle-push` publishes), and BUNDLE_IMG is added to relatedImages, as
# rendering the pushed image would do.
#
# Upgrades: the catalog holds the current bundle only. Its channel entry has
# skipRange "<VERSION", so OLM upgrades any earlier installed version straight to it, even though
# the earlier bundles are not in the catalog.
#
# Usage: hack/gen-catalog.sh OPM CATALOG_DIR PACKAGE VERSION BUNDLE_IMG CHANNELS DEFAULT_CHANNEL ICON
set -euo pipefail
opm=$1 dir=$2 pkg=$3 version=$4 bundle_img=$5 channels=$6 default_channel=$7 icon=$8
csv_name=$pkg.v$version

[ -d bundle/manifests ] || { echo "gen-catalog: bundle/manifests is missing: run 'make bundle' first" >&2; exit 1; }
case ",$channels," in *",$default_channel,"*) ;; *)
  echo "gen-catalog: DEFAULT_CHANNEL $default_channel is not one of CHANNELS $channels" >&2; exit 1 ;;
esac

out=$dir/$pkg/index.yaml
mkdir -p "$dir/$pkg"
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.bundle"' EXIT

"$opm" init "$pkg" --default-channel="$default_channel" --icon="$icon" -o yaml >"$tmp"

IFS=, read -r -a chans <<<"$channels"
for ch in "${chans[@]}"; do
  cat >>"$tmp" <<CHANNEL
---
entries:
- name: $csv_name
  skipRange: '<$version'
name: $ch
package: $pkg
schema: olm.channel
CHANNEL
done

"$opm" render ./bundle -o yaml >"$tmp.bundle"
grep -qx "name: $csv_name" "$tmp.bundle" ||
  { echo "gen-catalog: bundle/ does not hold $csv_name (VERSION mismatch? run 'make bundle')" >&2; exit 1; }
[ "$(grep -cx 'image: ""' "$tmp.bundle")" = 1 ] && [ "$(grep -cx 'relatedImages:' "$tmp.bundle")" = 1 ] ||
  { echo "gen-catalog: unexpected 'opm render ./bundle' output (image/relatedImages)" >&2; exit 1; }
awk -v img="$bundle_img" '
  $0 == "image: \"\""  { print "image: " img; next }
  $0 == "relatedImages:" { print; print "- image: " img; print "  name: \"\""; next }
  { print }' "$tmp.bundle" >>"$tmp"

chmod 0644 "$tmp"
mv "$tmp" "$out"
# Remove anything else a previous run (or another package name) left behind.
find "$dir" -mindepth 1 -maxdepth 1 ! -name "$pkg" -exec rm -rf {} +
find "$dir/$pkg" -mindepth 1 ! -name index.yaml -exec rm -rf {} +
