# clever-operator Makefile (operator-sdk go/v4 conventions).
# Every tool is built from the Go module proxy into bin/, pinned by the versions below.

# VERSION defines the project version for the bundle.
VERSION ?= 0.1.0
CHANNELS ?= alpha
DEFAULT_CHANNEL ?= alpha
BUNDLE_CHANNELS := --channels=$(CHANNELS)
BUNDLE_DEFAULT_CHANNEL := --default-channel=$(DEFAULT_CHANNEL)
BUNDLE_METADATA_OPTS ?= $(BUNDLE_CHANNELS) $(BUNDLE_DEFAULT_CHANNEL)
IMAGE_TAG_BASE ?= ghcr.io/clever-operator/clever-operator
BUNDLE_IMG ?= $(IMAGE_TAG_BASE)-bundle:v$(VERSION)
CATALOG_IMG ?= $(IMAGE_TAG_BASE)-catalog:v$(VERSION)
IMG ?= $(IMAGE_TAG_BASE):v$(VERSION)
CONTAINER_TOOL ?= docker

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

## Tool versions (all built from Go modules; see hack/tools/ for the ones needing a tool module)
ENVTEST_K8S_VERSION ?= 1.35.4
ETCD_VERSION ?= v3.6.6
CONTROLLER_TOOLS_VERSION ?= v0.20.0
KUSTOMIZE_VERSION ?= v5.8.1
HELM_VERSION ?= v3.21.0
OPERATOR_SDK_VERSION ?= v1.42.2
OPM_VERSION ?= v1.59.0
HELM_DOCS_VERSION ?= v1.14.2
# promtool of Prometheus 3.15.1 (Prometheus publishes its Go module as v0.3xx.y for v3.x);
# the same version must be required in hack/tools/promtool/go.mod.
PROMTOOL_VERSION ?= v0.315.1
# KWOK's controller (fake kubelet: Nodes and Pods without containers) for the whole-cluster suites;
# the same version must be required in hack/tools/kwok/go.mod.
KWOK_VERSION ?= v0.8.0
# OLM v0 (operator-lifecycle-manager: its olm and catalog operators, and its CRDs) for the
# whole-cluster OLM suite; the same version must be required in hack/tools/olm/go.mod.
OLM_VERSION ?= v0.42.0

LOCALBIN ?= $(CURDIR)/bin
ENVTEST_ASSETS ?= $(LOCALBIN)/envtest/$(ENVTEST_K8S_VERSION)
KUBE_APISERVER ?= $(ENVTEST_ASSETS)/kube-apiserver
ETCD ?= $(ENVTEST_ASSETS)/etcd
KUBE_CONTROLLER_MANAGER ?= $(ENVTEST_ASSETS)/kube-controller-manager
KUBE_SCHEDULER ?= $(ENVTEST_ASSETS)/kube-scheduler
KWOK ?= $(LOCALBIN)/kwok-$(KWOK_VERSION)
# kubectl of the same Kubernetes version, which the whole-cluster suites pass as KUBECTL.
KUBECTL_PINNED ?= $(LOCALBIN)/kubectl-v$(ENVTEST_K8S_VERSION)
OLM ?= $(LOCALBIN)/olm-$(OLM_VERSION)
OLM_CATALOG ?= $(LOCALBIN)/catalog-$(OLM_VERSION)
OLM_CRDS ?= $(LOCALBIN)/olm-crds-$(OLM_VERSION)
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
# The kubectl of install, uninstall, deploy and undeploy: yours (the whole-cluster suites pass a pinned one).
KUBECTL ?= kubectl
OPERATOR_SDK ?= $(LOCALBIN)/operator-sdk-$(OPERATOR_SDK_VERSION)
OPM ?= $(LOCALBIN)/opm-$(OPM_VERSION)
HELM_DOCS ?= $(LOCALBIN)/helm-docs-$(HELM_DOCS_VERSION)
PROMTOOL ?= $(LOCALBIN)/promtool-$(PROMTOOL_VERSION)
GINKGO_FLAGS ?=

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and RBAC from the Go markers, and the per-kind editor/viewer roles from the CRDs.
	$(CONTROLLER_GEN) crd paths="./..." output:crd:artifacts:config=config/crd/bases
	# The operator's cluster-scoped permissions (main.go's markers) and, apart, what it needs in
	# the namespaces it watches (internal/rbac/namespaced), bound per namespace when it watches a set.
	$(CONTROLLER_GEN) rbac:roleName=manager-role paths="." output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=manager-namespaced-role paths="./internal/rbac/namespaced" output:rbac:artifacts:config=config/rbac/namespaced-role
	hack/gen-kind-roles.sh

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: verify-generated
verify-generated: manifests generate ## Fail when generated files differ from what is committed.
	@if [ -n "$$(git status --porcelain -- config/crd config/rbac api dist/chart)" ]; then \
		echo "generated files are stale; run 'make manifests generate' and commit:"; \
		git status --porcelain -- config/crd config/rbac api dist/chart; git --no-pager diff --stat -- config/crd config/rbac api dist/chart; exit 1; fi

.PHONY: chart
chart: manifests helm-docs ## Regenerate dist/chart's CRDs and RBAC from config/, and its README's values table (helm-docs).
	HELM_DOCS="$(HELM_DOCS)" hack/gen-chart.sh

.PHONY: chart-lint
chart-lint: helm ## Lint the operator's Helm chart as renderers call it (no values, no --kube-version).
	$(HELM) lint dist/chart --strict

# The chart package: version from dist/chart/Chart.yaml, appVersion the operator's VERSION (the
# chart's default image tag is v<appVersion>, as IMG). CHART_REGISTRY: an oci:// URL, e.g.
# oci://registry.example.com/charts (after `helm registry login`).
CHART_DIST ?= dist
CHART_VERSION = $(shell sed -n 's/^version: *//p' dist/chart/Chart.yaml)
CHART_PACKAGE = $(CHART_DIST)/clever-operator-$(CHART_VERSION).tgz
CHART_REGISTRY ?=
CHART_PUSH_FLAGS ?=

.PHONY: chart-package
chart-package: helm ## Package dist/chart into $(CHART_DIST)/clever-operator-<version>.tgz (appVersion $(VERSION)).
	$(HELM) package dist/chart -d $(CHART_DIST) --app-version $(VERSION)

.PHONY: chart-push
chart-push: chart-package ## Push the chart package to CHART_REGISTRY (oci://host/path), e.g. for `helm install oci://host/path/clever-operator`.
	@[ -n "$(CHART_REGISTRY)" ] || { echo "set CHART_REGISTRY=oci://<registry>/<path>"; exit 2; }
	$(HELM) push $(CHART_PACKAGE) $(CHART_REGISTRY) $(CHART_PUSH_FLAGS)

.PHONY: verify-chart
verify-chart: manifests helm-docs ## Fail when dist/chart is stale relative to config/ or its README to values.yaml.
	HELM_DOCS="$(HELM_DOCS)" hack/gen-chart.sh --check

.PHONY: verify-alerts
verify-alerts: promtool helm-docs ## Check the alert rules with promtool and run their unit tests (config/prometheus/alerts_test.yaml).
	@# The rules as the chart holds them (dist/chart/files/alert-rules.yaml), which must match config/prometheus/alerts.yaml.
	HELM_DOCS="$(HELM_DOCS)" hack/gen-chart.sh --check
	$(PROMTOOL) check rules --lint-fatal dist/chart/files/alert-rules.yaml
	$(PROMTOOL) test rules config/prometheus/alerts_test.yaml

# The packages whose tests start nothing: no kube-apiserver, no helm, no kustomize, no bin/ tool
# (the operator's packages, the root package, hack/ and the test/ packages that read files or
# test helpers). Every other test/ package is an envtest or whole-cluster suite.
UNIT_PACKAGES = . ./api/... ./internal/... ./pkg/... ./hack/... ./test/alerts ./test/bench ./test/crdsizes ./test/image ./test/kube/...

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane nor tool from bin/ (under a minute on 2 cores).
	go test $(UNIT_PACKAGES) -count=1 -timeout 5m $(GINKGO_FLAGS)

# make test runs test/operator, the longest suite (132 specs, about 7 minutes alone), as two
# halves at once, each with its own control plane: the specs in the files OPERATOR_HALF matches,
# then the others. Beside them, the other packages run four at a time. Their specs mostly wait
# on the operator and the fake, not on the CPU.
OPERATOR_HALF = /(lifecycle|policy|status|credentials_objects|deletion|secrets|restore)_test\.go$$
TEST_PACKAGES = $$(go list ./... | grep -v -x $(CLUSTER_SUITES:./%=-e $(MODULE)/%) -e $(MODULE)/test/operator)

.PHONY: test
test: envtest-bins kustomize helm helm-docs vet ## Run unit tests and envtest suites against our own kube-apiserver + etcd.
	export KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)"; half=$$(mktemp -d); trap 'rm -rf $$half' EXIT; \
	go test ./test/operator -count=1 -timeout 30m $(GINKGO_FLAGS) -args -ginkgo.focus-file='$(OPERATOR_HALF)' >$$half/1 2>&1 & one=$$!; \
	go test ./test/operator -count=1 -timeout 30m $(GINKGO_FLAGS) -args -ginkgo.skip-file='$(OPERATOR_HALF)' >$$half/2 2>&1 & two=$$!; \
	rc=0; go test $(TEST_PACKAGES) -p 4 -count=1 -timeout 30m $(GINKGO_FLAGS) || rc=1; \
	wait $$one || rc=1; echo "test/operator, the files OPERATOR_HALF matches:"; cat $$half/1; \
	wait $$two || rc=1; echo "test/operator, the other files:"; cat $$half/2; \
	exit $$rc

# The suites on a whole cluster (test/kube/cluster.Start: controller-manager, scheduler, KWOK;
# OLM from the catalog): make deploy, the chart, OLM installs and upgrades, namespace deletion,
# garbage collection (docs/testing.md).
MODULE = github.com/clever-operator/clever-operator
CLUSTER_SUITES = $(addprefix ./,$(wildcard test/cluster test/wholecluster test/chartinstall test/olm))

.PHONY: test-cluster
test-cluster: cluster-bins olm-bins kustomize helm controller-gen ## Run the whole-cluster suites (the first run builds their binaries into bin/).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test $(CLUSTER_SUITES) -count=1 -timeout 40m $(GINKGO_FLAGS)

.PHONY: ci
ci: verify-generated verify-chart verify-bundle bundle-validate verify-alerts test ## Everything .ci/run checks.

# Go fuzz targets (package:Function). Their seeds (f.Add and testdata/fuzz/<Function>/) already
# run with every `go test`; `make fuzz` explores each one for FUZZTIME, one after the other.
FUZZTIME ?= 20s
FUZZ_TARGETS ?= ./internal/config:FuzzParseDocument ./internal/config:FuzzParseCleverTools \
	./internal/config:FuzzParseOverrideSecret ./internal/config:FuzzApplyOverride ./internal/templates:FuzzRenderTemplates
FUZZ_FLAGS ?= -fuzzminimizetime=5s

.PHONY: fuzz
fuzz: ## Run every Go fuzz target for FUZZTIME each (sequentially); a failure leaves its input in testdata/fuzz/.
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz: $$pkg $$name for $(FUZZTIME)"; \
		go test $$pkg -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) $(FUZZ_FLAGS); \
	done

##@ Build

.PHONY: build
build: ## Build the manager binary.
	go build -o bin/manager .

.PHONY: plugin
plugin: ## Build the kubectl plugin bin/kubectl-clever (internal/plugin/kubectl-clever; install: cp bin/kubectl-clever ~/.local/bin/).
	go build -trimpath -ldflags "-s -w" -o bin/kubectl-clever ./internal/plugin/kubectl-clever

.PHONY: build-fakeapi
build-fakeapi: ## Build the fake Clever Cloud API server.
	go build -o bin/fakeapi ./hack/fakeapi

.PHONY: run
run: ## Run the operator from source against the current kubeconfig (from the repo root: charts are relative).
	go run . $(RUN_ARGS)

.PHONY: demo
demo: envtest-bins ## Local control plane + fake Clever Cloud API + operator + samples; prints the Ready table.
	go run ./hack/demo --assets "$(ENVTEST_ASSETS)" $(DEMO_ARGS)

.PHONY: cluster-demo
cluster-demo: cluster-bins olm-bins ## A whole cluster (controller-manager, scheduler, KWOK), the operator installed through OLM from catalog/, samples; prints the CSV phase, the Deployment and the Ready table.
	go run ./hack/demo --cluster --assets "$(ENVTEST_ASSETS)" $(DEMO_ARGS)

.PHONY: bench
bench: envtest-bins ## Performance figures P1-P7 (P1 median of 3 with both floors, P5 small and 1000, P6 at 5000 resources from one pair of runs, P7 the realistic API) and A1 (Kubernetes writes from the audit log; docs/performance.md), about 30 min: table, bench/results.json, bench/time-to-ready.png. BENCH_ARGS="-only A1" etc.
	go run ./test/bench --assets "$(ENVTEST_ASSETS)" $(BENCH_ARGS)

.PHONY: chaos
chaos: envtest-bins ## Reliability scenarios (operator SIGKILLs, API faults, leader election, leak scan); CHAOS_ARGS=-reduced for the CI size.
	go run ./test/chaos --assets "$(ENVTEST_ASSETS)" $(CHAOS_ARGS)

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs (and so every resource) from the cluster.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: docker-build
docker-build: ## Build the operator image.
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the operator image.
	$(CONTAINER_TOOL) push $(IMG)

##@ Deployment

.PHONY: build-installer
build-installer: manifests kustomize ## Write dist/install.yaml (CRDs, RBAC, namespace, manager with IMG) for `kubectl apply --server-side -f`.
	mkdir -p dist
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default > dist/install.yaml

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (config/default, image IMG) to the cluster of the current kubeconfig.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -
	@echo "Credentials: kubectl -n clever-operator-system create secret generic clever-operator-credentials --from-literal=CLEVER_OPERATOR_API_TOKEN=... (see config/default/kustomization.yaml)"

.PHONY: undeploy
undeploy: kustomize ## Remove the operator but keep the CRDs and your resources (config/undeploy); `make uninstall` then removes the CRDs. Call with ignore-not-found=true to ignore missing objects.
	$(KUSTOMIZE) build config/undeploy | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

##@ OLM bundle and catalog (need no container engine, except the *-build and *-push targets)

# The OLM package: PROJECT's projectName.
PACKAGE ?= clever-operator
BUNDLE_GEN_FLAGS ?= -q --overwrite --version $(VERSION) $(BUNDLE_METADATA_OPTS)
# USE_IMAGE_DIGESTS=true pins images by digest in the bundle (needs registry access).
USE_IMAGE_DIGESTS ?= false
ifeq ($(USE_IMAGE_DIGESTS), true)
	BUNDLE_GEN_FLAGS += --use-image-digests
endif
# The CSV base (config/manifests/bases) holds the spec/status descriptors of the owned CRDs.
# Given api/, operator-sdk would replace them with ones derived from +operator-sdk:csv markers
# (there are none), so it is pointed at a directory that does not exist: it then keeps the base
# as is and logs "Skipping definitions parsing".
CSV_APIS_DIR ?= config/manifests/no-csv-markers
CSV_BASE ?= config/manifests/bases/$(PACKAGE).clusterserviceversion.yaml
BUNDLE_CSV ?= bundle/manifests/$(PACKAGE).clusterserviceversion.yaml
CATALOG_DIR ?= catalog
# Base and builder image of the catalog image: opm at the version of bin/opm (not :latest).
OPM_IMAGE ?= quay.io/operator-framework/opm:$(OPM_VERSION)

.PHONY: bundle
bundle: manifests kustomize operator-sdk ## Generate bundle/ and bundle.Dockerfile (operator-sdk), deterministic, then validate them.
	$(OPERATOR_SDK) generate kustomize manifests -q --interactive=false --apis-dir=$(CSV_APIS_DIR)
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	rm -rf bundle/manifests
	$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle $(BUNDLE_GEN_FLAGS)
	hack/pin-bundle-metadata.sh $(BUNDLE_CSV) $(CSV_BASE) $(IMG) config/manifests/icon.svg
	$(OPERATOR_SDK) bundle validate ./bundle

.PHONY: bundle-validate
bundle-validate: operator-sdk ## Validate bundle/ with the operatorframework suite (what OperatorHub requires).
	$(OPERATOR_SDK) bundle validate ./bundle --select-optional suite=operatorframework

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG.
	$(CONTAINER_TOOL) build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG.
	$(CONTAINER_TOOL) push $(BUNDLE_IMG)

.PHONY: catalog
catalog: opm ## Render bundle/ (as image BUNDLE_IMG) into the file-based catalog catalog/clever-operator/, then validate it.
	hack/gen-catalog.sh "$(OPM)" "$(CATALOG_DIR)" "$(PACKAGE)" "$(VERSION)" "$(BUNDLE_IMG)" "$(CHANNELS)" "$(DEFAULT_CHANNEL)" config/manifests/icon.svg
	$(OPM) validate $(CATALOG_DIR)

.PHONY: catalog-validate
catalog-validate: opm ## Validate the file-based catalog with opm.
	$(OPM) validate $(CATALOG_DIR)

# catalog.Dockerfile is generated (opm generate dockerfile) next to catalog/ and is not committed.
.PHONY: catalog-build
catalog-build: opm ## Build the catalog image CATALOG_IMG from catalog/ (serves BUNDLE_IMG, which must be pushed).
	rm -f catalog.Dockerfile
	$(OPM) generate dockerfile $(CATALOG_DIR) --base-image=$(OPM_IMAGE) --builder-image=$(OPM_IMAGE)
	$(CONTAINER_TOOL) build -f catalog.Dockerfile -t $(CATALOG_IMG) .

.PHONY: catalog-push
catalog-push: ## Push the catalog image CATALOG_IMG.
	$(CONTAINER_TOOL) push $(CATALOG_IMG)

.PHONY: verify-bundle
verify-bundle: ## Regenerate bundle/ and catalog/ and fail if they differ from what is committed.
	$(MAKE) bundle catalog
	@if [ -n "$$(git status --porcelain -- bundle catalog bundle.Dockerfile config)" ]; then \
		echo "bundle/catalog are stale: run 'make bundle catalog' (with the default IMG/VERSION) and commit:"; \
		git status --porcelain -- bundle catalog bundle.Dockerfile config; \
		git --no-pager diff --stat -- bundle catalog bundle.Dockerfile config; exit 1; fi

##@ Tools (each built once into bin/, skipped when present)

.PHONY: tools
tools: envtest-bins cluster-bins olm-bins controller-gen kustomize helm helm-docs operator-sdk opm promtool ## Build every pinned tool.

.PHONY: envtest-bins
envtest-bins: $(KUBE_APISERVER) $(ETCD) ## kube-apiserver and etcd for envtest.
$(KUBE_APISERVER):
	hack/build-tool.sh hack/tools/kube-apiserver $@ . -ldflags "$(K8S_VERSION_LDFLAGS)"
$(ETCD):
	hack/build-tool.sh hack/tools/etcd $@ .
K8S_VERSION_LDFLAGS = -X k8s.io/component-base/version.gitVersion=v$(ENVTEST_K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(ENVTEST_K8S_VERSION)))

# The rest of a cluster for test/kube/cluster.Start (whole-cluster suites such as test/cluster):
# kube-controller-manager and kube-scheduler of the same Kubernetes version, and KWOK
# (bin/kwok links to the pinned one).
.PHONY: cluster-bins
cluster-bins: envtest-bins $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KWOK) $(KUBECTL_PINNED) ## kube-controller-manager, kube-scheduler, KWOK and kubectl (with envtest-bins: a whole cluster without containers).
	@ln -sf $(notdir $(KWOK)) $(LOCALBIN)/kwok
	@ln -sf $(notdir $(KUBECTL_PINNED)) $(LOCALBIN)/kubectl
$(KUBECTL_PINNED):
	hack/build-tool.sh hack/tools/kubectl $@ . -ldflags "$(K8S_VERSION_LDFLAGS) $(subst k8s.io/component-base/version,k8s.io/client-go/pkg/version,$(K8S_VERSION_LDFLAGS))"
$(KUBE_CONTROLLER_MANAGER):
	hack/build-tool.sh hack/tools/kube-controller-manager $@ . -ldflags "$(K8S_VERSION_LDFLAGS)"
$(KUBE_SCHEDULER):
	hack/build-tool.sh hack/tools/kube-scheduler $@ . -ldflags "$(K8S_VERSION_LDFLAGS)"
$(KWOK):
	@grep -q 'sigs.k8s.io/kwok $(KWOK_VERSION)' hack/tools/kwok/go.mod || \
		{ echo "hack/tools/kwok/go.mod does not require sigs.k8s.io/kwok $(KWOK_VERSION)"; exit 1; }
	hack/build-tool.sh hack/tools/kwok $@ sigs.k8s.io/kwok/cmd/kwok

# OLM v0 for test/kube/cluster.StartOLM: its two operators (build tag json1, as OLM's own Makefile),
# its CRDs copied from the same module's deploy/chart/crds, and opm (OLM's bundle unpack stand-in
# runs it); bin/olm, bin/catalog, bin/olm-crds and bin/opm link to the pinned ones.
.PHONY: olm-bins
olm-bins: $(OLM) $(OLM_CATALOG) $(OLM_CRDS) $(OPM) ## OLM v0's olm and catalog operators, its CRDs, and opm (OLM from the catalog on the whole cluster).
	@ln -sf $(notdir $(OLM)) $(LOCALBIN)/olm
	@ln -sf $(notdir $(OLM_CATALOG)) $(LOCALBIN)/catalog
	@ln -sfn $(notdir $(OLM_CRDS)) $(LOCALBIN)/olm-crds
	@ln -sf $(notdir $(OPM)) $(LOCALBIN)/opm
OLM_MODULE = github.com/operator-framework/operator-lifecycle-manager
olm-version-check = @grep -q '$(OLM_MODULE) $(OLM_VERSION)' hack/tools/olm/go.mod || \
	{ echo "hack/tools/olm/go.mod does not require $(OLM_MODULE) $(OLM_VERSION)"; exit 1; }
$(OLM):
	$(olm-version-check)
	hack/build-tool.sh hack/tools/olm $@ $(OLM_MODULE)/cmd/olm -tags json1 -ldflags "-X $(OLM_MODULE)/pkg/version.OLMVersion=$(OLM_VERSION)"
$(OLM_CATALOG):
	$(olm-version-check)
	hack/build-tool.sh hack/tools/olm $@ $(OLM_MODULE)/cmd/catalog -tags json1 -ldflags "-X $(OLM_MODULE)/pkg/version.OLMVersion=$(OLM_VERSION)"
$(OLM_CRDS):
	$(olm-version-check)
	@src=$$(cd hack/tools/olm && go mod download $(OLM_MODULE) && go list -m -f '{{.Dir}}' $(OLM_MODULE))/deploy/chart/crds && \
		rm -rf $@.tmp && mkdir -p $@.tmp && cp $$src/*.yaml $@.tmp/ && chmod 0644 $@.tmp/*.yaml && mv $@.tmp $@ && \
		echo "copied OLM's CRDs from $$src into $@"

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN):
	$(call go-install-tool,$@,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION),)

.PHONY: kustomize
kustomize: $(KUSTOMIZE)
$(KUSTOMIZE):
	$(call go-install-tool,$@,sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION),)

.PHONY: helm
helm: $(HELM)
$(HELM):
	$(call go-install-tool,$@,helm.sh/helm/v3/cmd/helm,$(HELM_VERSION),-ldflags "-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION)")

.PHONY: helm-docs
helm-docs: $(HELM_DOCS)
$(HELM_DOCS):
	$(call go-install-tool,$@,github.com/norwoodj/helm-docs/cmd/helm-docs,$(HELM_DOCS_VERSION),-ldflags "-X main.version=$(HELM_DOCS_VERSION)")

.PHONY: operator-sdk
operator-sdk: $(OPERATOR_SDK)
$(OPERATOR_SDK):
	hack/build-tool.sh hack/tools/operator-sdk $@ github.com/operator-framework/operator-sdk/cmd/operator-sdk -tags containers_image_openpgp -ldflags "-X github.com/operator-framework/operator-sdk/internal/version.Version=$(OPERATOR_SDK_VERSION) -X github.com/operator-framework/operator-sdk/internal/version.GitVersion=$(OPERATOR_SDK_VERSION) -X github.com/operator-framework/operator-sdk/internal/version.KubernetesVersion=v1.35.1 -X github.com/operator-framework/operator-sdk/internal/version.ImageVersion=$(OPERATOR_SDK_VERSION)"

.PHONY: opm
opm: $(OPM)
$(OPM):
	hack/build-tool.sh hack/tools/opm $@ github.com/operator-framework/operator-registry/cmd/opm -tags json1,containers_image_openpgp

# Prometheus' go.mod has a replace directive, so `go install …@version` refuses it: promtool is
# built from the tool module hack/tools/promtool, which requires PROMTOOL_VERSION.
.PHONY: promtool
promtool: $(PROMTOOL)
$(PROMTOOL):
	@grep -q 'github.com/prometheus/prometheus $(PROMTOOL_VERSION)' hack/tools/promtool/go.mod || \
		{ echo "hack/tools/promtool/go.mod does not require github.com/prometheus/prometheus $(PROMTOOL_VERSION)"; exit 1; }
	@v=$(PROMTOOL_VERSION); v=$${v#v0.}; minor=$${v%%.*}; \
		hack/build-tool.sh hack/tools/promtool $@ github.com/prometheus/prometheus/cmd/promtool \
			-ldflags "-X github.com/prometheus/common/version.Version=3.$$((minor - 300)).$${v#*.}"
	@ln -sf $(notdir $@) $(LOCALBIN)/promtool

# go-install-tool builds package $(2)@$(3) into $(1) (a versioned file name) and links bin/<tool> to it.
define go-install-tool
@[ -x "$(1)" ] || { \
set -e; \
echo "building $(notdir $(1)) (this happens once; cached in bin/)"; \
tmpdir=$$(mktemp -d); \
GOBIN=$$tmpdir go install -trimpath $(4) $(2)@$(3); \
mkdir -p $(dir $(1)); mv $$tmpdir/* $(1); rmdir $$tmpdir; \
}
@ln -sf $(notdir $(1)) $(subst -$(3),,$(1))
endef
