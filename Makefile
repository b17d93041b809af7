# dbperf-operator build, generation and tests.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN_VERSION ?= v0.19.0
GOLANGCI_LINT_VERSION ?= v2.15.0
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
# VERSION (the file) is the release this tree builds: the images' tag, the
# chart's appVersion, config/manager's pins (hack/versiongen keeps them equal).
VERSION ?= $(shell cat VERSION)
LDFLAGS := -s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=$(VERSION)

# The images the project builds (docs/release.md). YCSB publishes no image,
# so the project builds one; its tag is YCSB's version, the one the ycsb
# workload names as its default image.
REGISTRY ?= ghcr.io/dbperf-io
IMG ?= $(REGISTRY)/dbperf-operator:$(VERSION)
RUNNER_IMG ?= $(REGISTRY)/dbperf-runner:$(VERSION)
YCSB_VERSION ?= 0.17.0
YCSB_IMG ?= $(REGISTRY)/ycsb:$(YCSB_VERSION)
K6_VERSION ?= 1.0.0
K6_IMG ?= $(REGISTRY)/k6:$(K6_VERSION)
CONTAINER_TOOL ?= docker
PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: all
all: build

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the tools' CEL rules, CRDs and RBAC from the markers, the chart's copies of them, docs/api.md and the samples' pool-label components.
	go run ./hack/toolrules
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true rbac:roleName=dbperf-manager-role paths="./api/..." paths="./controllers/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	go run ./hack/chartgen
	go run ./hack/apidocs
	go run ./hack/poollabel
	go run ./hack/versiongen

.PHONY: set-version
set-version: ## Set the release version everywhere: make set-version NEW_VERSION=v0.2.0 (docs/release.md).
	@test -n "$(NEW_VERSION)" || { echo "say which: make set-version NEW_VERSION=v0.2.0"; exit 1; }
	go run ./hack/versiongen -set $(NEW_VERSION)

.PHONY: verify
verify: generate manifests ## Fail when generated files are not committed, or the chart and config/ drift.
	@git diff --exit-code -- api config charts docs internal/version || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config charts docs internal/version)" || { git status --porcelain -- api config charts docs internal/version; echo "untracked generated files: commit them"; exit 1; }
	bash hack/verify-chart.sh

.PHONY: fmt
fmt:
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet:
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint.
	$(GOLANGCI_LINT) run ./...

##@ Build

.PHONY: build
build: generate ## Build the manager and the static runner.
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(LOCALBIN)/manager ./cmd/manager
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(LOCALBIN)/dbperf-runner ./cmd/runner
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(LOCALBIN)/kubectl-dbperf ./cmd/kubectl-dbperf

##@ Images and releases (docs/release.md; a Docker engine with buildx, which the development machines lack)

.PHONY: images
images: ## Print the images docker-build builds, one a line.
	@printf '%s\n' $(IMG) $(RUNNER_IMG) $(YCSB_IMG) $(K6_IMG)

.PHONY: default-images
default-images: ## Print every image a cluster pulls by default (docs/install.md); REGISTRY=host/path adds each one's name under it, for a mirror.
	@go run ./hack/defaultimages $(if $(REGISTRY),-registry $(REGISTRY))

.PHONY: docker-build
docker-build: ## Build the manager, runner and YCSB images for this machine's platform.
	$(CONTAINER_TOOL) build --target manager --build-arg VERSION=$(VERSION) -t $(IMG) .
	$(CONTAINER_TOOL) build --target runner --build-arg VERSION=$(VERSION) -t $(RUNNER_IMG) .
	$(CONTAINER_TOOL) build --build-arg YCSB_VERSION=$(YCSB_VERSION) -t $(YCSB_IMG) workloads/ycsb/image
	$(CONTAINER_TOOL) build --target k6 --build-arg VERSION=$(VERSION) -t $(K6_IMG) .

.PHONY: docker-push
docker-push: ## Push the images docker-build built.
	$(CONTAINER_TOOL) push $(IMG)
	$(CONTAINER_TOOL) push $(RUNNER_IMG)
	$(CONTAINER_TOOL) push $(YCSB_IMG)
	$(CONTAINER_TOOL) push $(K6_IMG)

.PHONY: docker-buildx
docker-buildx: ## Build and push the images for every platform of PLATFORMS (linux/amd64,linux/arm64) with buildx.
	$(CONTAINER_TOOL) buildx inspect dbperf-builder >/dev/null 2>&1 || $(CONTAINER_TOOL) buildx create --name dbperf-builder
	$(CONTAINER_TOOL) buildx build --builder dbperf-builder --platform $(PLATFORMS) --target manager --build-arg VERSION=$(VERSION) -t $(IMG) --push .
	$(CONTAINER_TOOL) buildx build --builder dbperf-builder --platform $(PLATFORMS) --target runner --build-arg VERSION=$(VERSION) -t $(RUNNER_IMG) --push .
	$(CONTAINER_TOOL) buildx build --builder dbperf-builder --platform $(PLATFORMS) --build-arg YCSB_VERSION=$(YCSB_VERSION) -t $(YCSB_IMG) --push workloads/ycsb/image
	$(CONTAINER_TOOL) buildx build --builder dbperf-builder --platform $(PLATFORMS) --target k6 --build-arg VERSION=$(VERSION) -t $(K6_IMG) --push .

.PHONY: release
release: ## The release's files in dist/: the packaged chart, kubectl-dbperf for linux and darwin on amd64 and arm64, the krew manifest, checksums.
	bash hack/release.sh

##@ Test

.PHONY: control-plane
control-plane: ## Build (or reuse) the cached Kubernetes control-plane binaries.
	bash hack/build-control-plane.sh

.PHONY: test
test: build ## Run every test: parsers, runner against real servers, controller in envtest.
	bash hack/test.sh

.PHONY: compat
compat: build ## The envtest suites and a simulated-cluster subset on the oldest Kubernetes claimed (COMPAT_K8S_VERSIONS, default 1.28.15; its control plane built once, ~40 min on 2 busy cores; docs/install.md#compatibility).
	bash hack/compat.sh

.PHONY: hammerdb-full
hammerdb-full: ## HammerDB TPROC-C in full: 1-minute ramp-up and test at 2 and 4 VUs, PostgreSQL and MariaDB, plain and two-way TLS, and an autopilot of 1 then 3 VUs (~18 min).
	DBPERF_HAMMERDB_FULL=1 bash hack/test.sh -run '^(TestRealTPCC|TestRealAutopilotStages)$$' -v

.PHONY: demo
demo: ## The quickstart: simulated cluster, Helm install, BenchmarkRuns on two pools, results table.
	bash hack/quickstart.sh

.PHONY: demo-runner
demo-runner: ## No cluster: real PostgreSQL and Redis measured through dbperf-runner directly.
	bash hack/demo-runner.sh

.PHONY: bench
bench: ## Run the benchmarks: parse throughput and runner overhead.
	bash hack/bench.sh

.PHONY: scale
scale: build ## The scale benchmark: 100, 300 and 1,000 runs at once on the simulated cluster (100 nodes), 1,000 queued runs idle (~20 min; docs/reliability.md).
	DBPERF_SCALE_RUNS=$${DBPERF_SCALE_RUNS:-100,300,1000} DBPERF_TEST_PKGS=./test/scale bash hack/test.sh -run '^TestScale$$' -v -timeout 90m

.PHONY: samples
samples: build ## Every sample of config/samples (with getting-started/) and config/samples/published in its smoke form on the embedded cluster, local servers playing the targets (~15 min; docs/local-cluster.md).
	DBPERF_SAMPLES=$${SAMPLES:-1} DBPERF_TEST_PKGS=./test/e2e bash hack/test.sh -run '^TestEverySampleRunsInItsSmokeForm$$' -v -timeout 40m

.PHONY: upgrade
upgrade: build ## The chart upgrade test: an older commit's chart, manager and runner upgraded while runs and a comparison are in flight (~4 min; docs/install.md).
	DBPERF_UPGRADE=1 DBPERF_TEST_PKGS=./test/e2e bash hack/test.sh -run '^TestChartUpgradeKeepsRunsInFlight$$' -v

.PHONY: capacity
capacity: build ## The capacity search in full: five searches of one pgbench setting against a local PostgreSQL (three trials a level, exceed ratio 34 %), the spread of their maxima (~15 min; docs/capacity.md).
	DBPERF_CAPACITY_SEARCHES=$${DBPERF_CAPACITY_SEARCHES:-5} DBPERF_TEST_PKGS=./test/e2e bash hack/test.sh -run '^TestCapacitySearchFindsTheKnee$$' -v -timeout 60m

.PHONY: chaos
chaos: build ## The chaos test in full: the manager SIGKILLed 50 times while runs, a comparison and a schedule are in flight (~15 min; docs/reliability.md).
	DBPERF_CHAOS_KILLS=$${DBPERF_CHAOS_KILLS:-50} DBPERF_MANY_RUNS=$${DBPERF_MANY_RUNS:-200} DBPERF_TEST_PKGS=./test/e2e bash hack/test.sh -run '^TestManyShortRunsKeepEveryMeasurement$$' -v -timeout 60m

##@ Tools

$(CONTROLLER_GEN):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(LOCALBIN)/controller-gen $(CONTROLLER_GEN)

$(GOLANGCI_LINT):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/golangci-lint $(GOLANGCI_LINT)

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-15s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)
