# The project's three images from one Dockerfile (`make docker-build`,
# `make docker-buildx` for linux/amd64 and linux/arm64; docs/release.md):
#   docker build --target manager --build-arg VERSION=v0.1.0 -t ghcr.io/dbperf-io/dbperf-operator:v0.1.0 .
#   docker build --target runner  --build-arg VERSION=v0.1.0 -t ghcr.io/dbperf-io/dbperf-runner:v0.1.0 .
#   docker build --target k6      --build-arg VERSION=v0.1.0 -t ghcr.io/dbperf-io/k6:1.0.0 .
# The runner image holds only the static binary at /dbperf-runner: workload
# pods copy it into an emptyDir and run it inside the tool's own image.
#
# The Go stages run on the build machine's platform and cross-compile for
# the target's (CGO off, so no emulator runs the compiler); only the final
# COPY happens per platform. The k6 image is k6 (the version
# workloads/k6/xk6/go.mod pins) with dbperf's output extension, which
# aggregates k6's samples inside k6 for the runner (hack/build-k6.sh builds
# the same binary on a development machine). Pin the bases by digest in a release pipeline
# with --build-arg GO_IMAGE=golang:1.26@sha256:… BASE_IMAGE=…@sha256:….
ARG GO_IMAGE=golang:1.26
ARG BASE_IMAGE=gcr.io/distroless/static:nonroot

FROM --platform=$BUILDPLATFORM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION
ARG TARGETOS=linux
ARG TARGETARCH
ENV CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH}
RUN test -n "${VERSION}" || { echo "VERSION is unset: build with --build-arg VERSION=\$(cat VERSION) (make docker-build does)"; exit 1; }

FROM build AS build-manager
RUN go build -trimpath -ldflags "-s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=${VERSION}" -o /out/manager ./cmd/manager

FROM build AS build-runner
RUN go build -trimpath -ldflags "-s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=${VERSION}" -o /out/dbperf-runner ./cmd/runner

FROM build AS build-k6
RUN cd workloads/k6/xk6 && go build -trimpath -ldflags "-s -w" -o /out/k6 ./cmd/k6

FROM ${BASE_IMAGE} AS k6
ARG VERSION
LABEL org.opencontainers.image.source=https://github.com/dbperf-io/dbperf-operator \
      org.opencontainers.image.licenses=Apache-2.0 org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.description="k6 with dbperf-operator's output extension (k6's samples aggregated in k6 for dbperf-runner)"
COPY --from=build-k6 /out/k6 /usr/bin/k6
COPY LICENSE NOTICE /licenses/
USER 65532:65532
ENTRYPOINT ["/usr/bin/k6"]

FROM ${BASE_IMAGE} AS runner
ARG VERSION
LABEL org.opencontainers.image.source=https://github.com/dbperf-io/dbperf-operator \
      org.opencontainers.image.licenses=Apache-2.0 org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.description="dbperf-runner: copied into every workload pod next to the load tool"
COPY --from=build-runner /out/dbperf-runner /dbperf-runner
COPY LICENSE NOTICE /licenses/
USER 65532:65532
ENTRYPOINT ["/dbperf-runner"]

FROM ${BASE_IMAGE} AS manager
ARG VERSION
LABEL org.opencontainers.image.source=https://github.com/dbperf-io/dbperf-operator \
      org.opencontainers.image.licenses=Apache-2.0 org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.description="dbperf-operator: the manager of BenchmarkRuns, comparisons and schedules"
COPY --from=build-manager /out/manager /manager
COPY LICENSE NOTICE /licenses/
USER 65532:65532
ENTRYPOINT ["/manager"]
