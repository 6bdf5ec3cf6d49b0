# ork: build, test, lint. `make help` lists the targets.
#
# Integration tests run a real etcd + kube-apiserver (internal/testenv) built from the pinned
# module hack/k8s-tools into $ORK_K8S_CACHE (default ~/.cache/ork/k8s/<version>); `make test`
# builds them first when missing (about 15 minutes cold, seconds when present).

SHELL := bash
GO ?= go

PKG := github.com/orkspace/ork/internal/version
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).Date=$(DATE)

# -race: the run engine is concurrent (informers, work queues, workers), so every `make test`
# runs under the race detector. It needs cgo (gcc). Measured on 2 cores: the first -race build
# of the client-go/controller-runtime closure costs ~6 min once; later runs reuse the cache.
# Packages run in parallel (go test's default -p): each integration package starts its own
# control plane on its own ports.
# -count=1: the integration tests talk to a control plane that go test's cache cannot see, so
# they always run.
TEST_FLAGS ?= -race -count=1
TEST_TIMEOUT ?= 30m

.PHONY: help demo build k8s-bin test test-unit lint bench

help:
	@echo 'make demo       ork run on examples/remote against a local control plane, end to end'
	@echo 'make build      bin/ork with version ldflags'
	@echo 'make k8s-bin    etcd, kube-apiserver, kubectl, kube-controller-manager for integration tests (hack/build-k8s.sh)'
	@echo 'make test       k8s-bin, then every test (unit + integration) with $(TEST_FLAGS)'
	@echo 'make test-unit  unit tests only (ORK_SKIP_INTEGRATION=1), fast'
	@echo 'make lint       gofmt -l and go vet'
	@echo 'make bench      reconcile throughput of ork against a raw client-go baseline'

demo:
	@hack/demo.sh

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ork ./cmd/ork

k8s-bin:
	@hack/build-k8s.sh >/dev/null

test: k8s-bin
	$(GO) test $(TEST_FLAGS) -timeout $(TEST_TIMEOUT) ./...

test-unit:
	ORK_SKIP_INTEGRATION=1 $(GO) test -timeout 10m ./...

lint:
	@unformatted=$$(gofmt -l .); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l: not formatted:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

bench: k8s-bin
	$(GO) test ./internal/run -run '^$$' -bench ReconcileThroughput -benchtime 3x
	$(GO) test ./internal/run/remote -run '^$$' -bench . -benchmem
