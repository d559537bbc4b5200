#!/usr/bin/env bash
# Builds one pinned tool from its tool module under hack/tools/<name> into the given output path.
# Usage: hack/build-tool.sh <tool-dir> <output> <package> [go build flags...]
# Idempotent: exits at once when <output> already exists.
set -euo pipefail
dir=$1 out=$2 pkg=$3; shift 3
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [ -x "$out" ]; then exit 0; fi
mkdir -p "$(dirname "$out")"
echo "building $(basename "$out") from $dir (this happens once; cached in bin/)" >&2
tmp="$out.tmp.$$"
(cd "$dir" && go build -trimpath -o "$tmp" "$@" "$pkg")
mv "$tmp" "$out"
