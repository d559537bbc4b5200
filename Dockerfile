# syntax=docker/dockerfile:1
# The clever-operator image: a static Go binary on distroless, non-root, with watches.yaml and
# the add-on chart in the working directory (/), where the operator looks for them.
# test/image checks that every COPY source exists and that the paths match main.go and
# config/manager.

# Pinned builder (exact Go release) and runtime (distroless static nonroot, digest of
# 2026-08-26; refresh with `crane digest gcr.io/distroless/static-debian12:nonroot`).
ARG GO_IMAGE=golang:1.26.8
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS builder
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=0.1.0
WORKDIR /workspace
# Dependencies first, for layer caching.
COPY go.mod go.sum ./
RUN go mod download
COPY main.go ./
COPY api/ api/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/manager .

FROM ${RUNTIME_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="clever-operator" \
      org.opencontainers.image.description="Manages Clever Cloud add-ons as Kubernetes custom resources" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /
COPY --from=builder /out/manager /manager
COPY watches.yaml /watches.yaml
COPY helm-charts/ /helm-charts/
USER 65532:65532
ENTRYPOINT ["/manager"]
