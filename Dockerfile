# Two images from one build:
#   docker build --target manager -t ghcr.io/dbperf-io/dbperf-operator:TAG .
#   docker build --target runner  -t ghcr.io/dbperf-io/dbperf-runner:TAG .
# The runner image holds only the static binary at /dbperf-runner: workload
# pods copy it into an emptyDir and run it inside the tool's own image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=${VERSION}" -o /out/manager ./cmd/manager && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=${VERSION}" -o /out/dbperf-runner ./cmd/runner

FROM gcr.io/distroless/static:nonroot AS runner
COPY --from=build /out/dbperf-runner /dbperf-runner
USER 65532:65532
ENTRYPOINT ["/dbperf-runner"]

FROM gcr.io/distroless/static:nonroot AS manager
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
