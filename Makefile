# dbperf-operator build, generation and tests.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN_VERSION ?= v0.19.0
GOLANGCI_LINT_VERSION ?= v2.15.0
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/dbperf-io/dbperf-operator/internal/version.Version=$(VERSION)

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

.PHONY: verify
verify: generate manifests ## Fail when generated files are not committed, or the chart and config/ drift.
	@git diff --exit-code -- api config charts docs || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config charts docs)" || { git status --porcelain -- api config charts docs; echo "untracked generated files: commit them"; exit 1; }
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

##@ Test

.PHONY: control-plane
control-plane: ## Build (or reuse) the cached Kubernetes control-plane binaries.
	bash hack/build-control-plane.sh

.PHONY: test
test: build ## Run every test: parsers, runner against real servers, controller in envtest.
	bash hack/test.sh

.PHONY: hammerdb-full
hammerdb-full: ## HammerDB TPROC-C in full: 1-minute ramp-up and test at 2 and 4 VUs, PostgreSQL and MariaDB, plain and two-way TLS (~15 min).
	DBPERF_HAMMERDB_FULL=1 bash hack/test.sh -run '^TestRealTPCC$$' -v

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
	DBPERF_SAMPLES=1 DBPERF_TEST_PKGS=./test/e2e bash hack/test.sh -run '^TestEverySampleRunsInItsSmokeForm$$' -v -timeout 40m

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
