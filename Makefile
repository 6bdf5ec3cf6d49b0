# ork: build, test, lint. `make help` lists the targets.
#
# Integration tests run a real etcd + kube-apiserver (internal/testenv) built from the pinned
# module hack/k8s-tools into $ORK_K8S_CACHE (default ~/.cache/ork/k8s/<version>); `make test`
# builds them first when missing (about 15 minutes cold, seconds when present). The chart tests
# of `ork bundle --helm` run helm, built the same way from hack/helm-tools into $ORK_HELM_CACHE
# (default ~/.cache/ork/helm/<version>; about 8 minutes cold on 2 cores). The image test of
# `ork init`'s Go reconciler runs ko, likewise from hack/ko-tools into $ORK_KO_CACHE (default
# ~/.cache/ork/ko/<version>; about 15 minutes cold on busy 2 cores). `make lint` runs
# golangci-lint (config .golangci.yml), likewise from hack/golangci-lint-tools into
# $ORK_GOLANGCI_LINT_CACHE (default ~/.cache/ork/golangci-lint/<version>; about 5 minutes cold
# on busy 2 cores).

SHELL := bash
GO ?= go

PKG := github.com/orkspace/ork/internal/version
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).Date=$(DATE)

# -race: the run engine is concurrent (informers, work queues, workers), so every `make test`
# runs under the race detector. It needs cgo and so a C compiler (check-cc says so when
# there is none). Measured on 2 cores: the first -race build
# of the client-go/controller-runtime closure costs ~6 min once; later runs reuse the cache.
# Packages run in parallel (go test's default -p): each integration package starts its own
# control plane on its own ports. internal/run's end-to-end tests are the longest package
# (~5 min with -race on 2 cores); suites split from them into packages of their own
# (internal/run/rolloutrun, internal/run/shardrun) run beside it instead of inside it.
# -count=1: the integration tests talk to a control plane that go test's cache cannot see, so
# they always run.
TEST_FLAGS ?= -race -count=1
TEST_TIMEOUT ?= 30m

.PHONY: help demo build k8s-bin helm-bin ko-bin golangci-lint-bin image-check check-cc test test-unit sdk-test lint bench

help:
	@echo 'make demo       ork run on examples/remote against a local control plane, end to end'
	@echo 'make build      bin/ork with version ldflags'
	@echo 'make k8s-bin    etcd, kube-apiserver, kubectl, kube-controller-manager for integration tests (hack/build-k8s.sh)'
	@echo 'make helm-bin   helm for the chart tests of ork bundle --helm (hack/build-tool.sh helm)'
	@echo 'make ko-bin     ko for the image test of ork init'"'"'s Go reconciler (hack/build-tool.sh ko)'
	@echo 'make golangci-lint-bin  golangci-lint for make lint (hack/build-tool.sh golangci-lint)'
	@echo 'make image-check  build the release image with ko onto a stand-in base and inspect it (hack/image-check.sh)'
	@echo 'make test       check-cc, k8s-bin, helm-bin, ko-bin, then every test (unit + integration) with $(TEST_FLAGS)'
	@echo 'make check-cc   with -race in TEST_FLAGS, fail early with how to get the C compiler it needs'
	@echo 'make test-unit  unit tests only (ORK_SKIP_INTEGRATION=1), fast'
	@echo 'make sdk-test   the reconciler SDKs: sdk/go module (vet, test), sdk/python (mypy --strict, unittest), sdk/ts (tsc --strict, node --test)'
	@echo 'make lint       gofmt -l, go vet, then golangci-lint run (.golangci.yml)'
	@echo 'make bench      ork against the apiserver limit and a controller-runtime operator, N=1000,2000 (BENCH_N=..., BENCH_RUNS=3): docs/benchmarks.md'

demo:
	@hack/demo.sh

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ork ./cmd/ork

k8s-bin:
	@hack/build-k8s.sh >/dev/null

helm-bin:
	@hack/build-tool.sh helm >/dev/null

ko-bin:
	@hack/build-tool.sh ko >/dev/null

golangci-lint-bin:
	@hack/build-tool.sh golangci-lint >/dev/null

image-check:
	@hack/image-check.sh

# check-cc: -race needs cgo, and cgo a C compiler. Without one, say so and how to get one,
# before the k8s binaries are built, instead of failing later with cgo's own message.
check-cc:
	@if [[ " $(TEST_FLAGS) " == *" -race "* ]]; then \
	  cc=$$($(GO) env CC); cgo=$$($(GO) env CGO_ENABLED); \
	  if [ "$$cgo" != 1 ] || ! command -v "$${cc%% *}" >/dev/null; then \
	    echo "make test runs go test -race (the race detector), which needs cgo and so a C compiler;" >&2; \
	    echo "go finds none (CC=$$cc, CGO_ENABLED=$$cgo). Install one and run make test again:" >&2; \
	    echo "  Debian/Ubuntu: apt-get install gcc libc6-dev    Fedora: dnf install gcc" >&2; \
	    echo "  Alpine: apk add gcc musl-dev                    macOS: xcode-select --install" >&2; \
	    echo "or run the tests without the race detector: make test TEST_FLAGS=-count=1" >&2; \
	    exit 1; \
	  fi; \
	fi

test: check-cc k8s-bin helm-bin ko-bin sdk-test
	$(GO) test $(TEST_FLAGS) -timeout $(TEST_TIMEOUT) ./...

test-unit:
	ORK_SKIP_INTEGRATION=1 $(GO) test -timeout 10m ./...

# sdk-test: sdk/go is a module of its own (go test ./... at the root does not enter it);
# sdk/python needs python3 and mypy (Debian: apt-get install python3 mypy); sdk/ts needs node
# and npm (Debian: apt-get install nodejs npm) and installs the TypeScript of its lock file
# with npm ci when node_modules is older than the lock file. tsconfig.json is strict, so the
# build is the type check. ~20 s warm.
sdk-test:
	cd sdk/go && $(GO) vet ./... && $(GO) test $(TEST_FLAGS) ./...
	@command -v python3 >/dev/null && command -v mypy >/dev/null || { echo "make sdk-test needs python3 and mypy for the Python SDK (Debian/Ubuntu: apt-get install python3 mypy)" >&2; exit 1; }
	cd sdk/python && mypy --strict ork_reconciler examples tests && PYTHONDONTWRITEBYTECODE=1 python3 -m unittest discover -s tests -t .
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "make sdk-test needs node and npm for the TypeScript SDK (Debian/Ubuntu: apt-get install nodejs npm)" >&2; exit 1; }
	cd sdk/ts && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; } && node_modules/.bin/tsc -p . --strict && node --test build/test/*.test.js

lint: golangci-lint-bin
	@unformatted=$$(gofmt -l .); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	"$$(hack/build-tool.sh golangci-lint 2>/dev/null)/golangci-lint" run ./...

# bench: a fresh control plane per system; prints the tables, writes bench-results/results.json
# and convergence-<N>.svg. BENCH_RUNS=3 repeats it (medians and spreads over the runs);
# BENCH_FLAGS="-workload fanout10,fanout20,multicrd" for other workloads, "-memory
# 1000,5000,10000" measures memory instead.
BENCH_N ?= 1000,2000
BENCH_RUNS ?= 1
BENCH_FLAGS ?=
bench: k8s-bin
	$(GO) run ./bench -n $(BENCH_N) -runs $(BENCH_RUNS) $(BENCH_FLAGS)
	$(GO) test ./internal/remote -run '^$$' -bench . -benchmem
