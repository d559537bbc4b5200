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

LOCALBIN ?= $(CURDIR)/bin
ENVTEST_ASSETS ?= $(LOCALBIN)/envtest/$(ENVTEST_K8S_VERSION)
KUBE_APISERVER ?= $(ENVTEST_ASSETS)/kube-apiserver
ETCD ?= $(ENVTEST_ASSETS)/etcd
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
OPERATOR_SDK ?= $(LOCALBIN)/operator-sdk-$(OPERATOR_SDK_VERSION)
OPM ?= $(LOCALBIN)/opm-$(OPM_VERSION)
GINKGO_FLAGS ?=

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and RBAC from the Go markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./..." output:crd:artifacts:config=config/crd/bases

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
	@if [ -n "$$(git status --porcelain -- config/crd config/rbac api)" ]; then \
		echo "generated files are stale; run 'make manifests generate' and commit:"; \
		git status --porcelain -- config/crd config/rbac api; git --no-pager diff --stat -- config/crd config/rbac api; exit 1; fi

.PHONY: test
test: envtest-bins vet ## Run unit tests and envtest suites against our own kube-apiserver + etcd.
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./... -count=1 -timeout 30m $(GINKGO_FLAGS)

.PHONY: ci
ci: verify-generated test ## What .ci/run runs.

##@ Build

.PHONY: build
build: ## Build the manager binary.
	go build -o bin/manager .

.PHONY: build-fakeapi
build-fakeapi: ## Build the fake Clever Cloud API server.
	go build -o bin/fakeapi ./hack/fakeapi

.PHONY: run
run: ## Run the operator from source against the current kubeconfig (from the repo root: charts are relative).
	go run . $(RUN_ARGS)

.PHONY: demo
demo: envtest-bins ## Local control plane + fake Clever Cloud API + operator + samples; prints the Ready table.
	go run ./hack/demo --assets "$(ENVTEST_ASSETS)" $(DEMO_ARGS)

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | kubectl apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs (and so every resource) from the cluster.
	$(KUSTOMIZE) build config/crd | kubectl delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: docker-build
docker-build: ## Build the operator image.
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the operator image.
	$(CONTAINER_TOOL) push $(IMG)

##@ Tools (each built once into bin/, skipped when present)

.PHONY: tools
tools: envtest-bins controller-gen kustomize helm operator-sdk opm ## Build every pinned tool.

.PHONY: envtest-bins
envtest-bins: $(KUBE_APISERVER) $(ETCD) ## kube-apiserver and etcd for envtest.
$(KUBE_APISERVER):
	hack/build-tool.sh hack/tools/kube-apiserver $@ . -ldflags "-X k8s.io/component-base/version.gitVersion=v$(ENVTEST_K8S_VERSION) -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(ENVTEST_K8S_VERSION)))"
$(ETCD):
	hack/build-tool.sh hack/tools/etcd $@ .

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

.PHONY: operator-sdk
operator-sdk: $(OPERATOR_SDK)
$(OPERATOR_SDK):
	hack/build-tool.sh hack/tools/operator-sdk $@ github.com/operator-framework/operator-sdk/cmd/operator-sdk -tags containers_image_openpgp -ldflags "-X github.com/operator-framework/operator-sdk/internal/version.Version=$(OPERATOR_SDK_VERSION) -X github.com/operator-framework/operator-sdk/internal/version.GitVersion=$(OPERATOR_SDK_VERSION) -X github.com/operator-framework/operator-sdk/internal/version.KubernetesVersion=v1.35.1 -X github.com/operator-framework/operator-sdk/internal/version.ImageVersion=$(OPERATOR_SDK_VERSION)"

.PHONY: opm
opm: $(OPM)
$(OPM):
	hack/build-tool.sh hack/tools/opm $@ github.com/operator-framework/operator-registry/cmd/opm -tags json1,containers_image_openpgp

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
