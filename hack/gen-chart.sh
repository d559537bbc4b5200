#!/usr/bin/env bash
# Regenerates the parts of the operator's Helm chart (dist/chart) derived from config/:
# the CRD templates (templates/crds/, from config/crd/bases), the manager ClusterRoles'
# rules (templates/rbac/manager-clusterrole.yaml, from config/rbac/role.yaml), the
# leader-election Role's rules (templates/rbac/leader-election.yaml) and the per-kind
# editor/viewer ClusterRoles (templates/rbac/kind-clusterroles.yaml, from
# config/rbac/*_{editor,viewer}_role.yaml). Run `make manifests` (and hack/gen-kind-roles.sh)
# first when the API types or RBAC markers changed. Then, with helm-docs ($HELM_DOCS, built by
# `make helm-docs`), dist/chart/README.md from README.md.gotmpl and the `# --` comments of
# values.yaml (the values table). Idempotent: a second run changes nothing.
#
# Usage: hack/gen-chart.sh           regenerate
#        hack/gen-chart.sh --check   write nothing; exit 1 if the chart is out of date
set -euo pipefail
cd "$(dirname "$0")/.."
args=() check=
case "${1:-}" in
  --check) args+=(-check) check=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
go run ./hack/genchart -root . "${args[@]}"

helm_docs=${HELM_DOCS:-bin/helm-docs}
if [ ! -x "$helm_docs" ]; then
  echo "gen-chart: $helm_docs not found: run \`make helm-docs\` (or set HELM_DOCS)" >&2
  exit 1
fi
docs_args=(--chart-search-root dist/chart --template-files README.md.gotmpl --sort-values-order file --log-level warning)
if [ -n "$check" ]; then
  if ! "$helm_docs" "${docs_args[@]}" --dry-run | diff -u dist/chart/README.md - >&2; then
    echo "gen-chart: dist/chart/README.md is stale relative to README.md.gotmpl and values.yaml (run make chart)" >&2
    exit 1
  fi
else
  "$helm_docs" "${docs_args[@]}"
fi
