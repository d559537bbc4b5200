#!/usr/bin/env bash
# Regenerates the parts of the operator's Helm chart (dist/chart) derived from config/:
# the CRD templates (templates/crds/, from config/crd/bases), the manager ClusterRoles'
# rules (templates/rbac/manager-clusterrole.yaml, from config/rbac/role.yaml), the
# leader-election Role's rules (templates/rbac/leader-election.yaml) and the per-kind
# editor/viewer ClusterRoles (templates/rbac/kind-clusterroles.yaml, from
# config/rbac/*_{editor,viewer}_role.yaml). Run `make manifests` (and hack/gen-kind-roles.sh)
# first when the API types or RBAC markers changed. Idempotent: a second run changes nothing.
#
# Usage: hack/gen-chart.sh           regenerate
#        hack/gen-chart.sh --check   write nothing; exit 1 if the chart is out of date
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
case "${1:-}" in
  --check) args+=(-check) ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
exec go run ./hack/genchart -root . "${args[@]}"
