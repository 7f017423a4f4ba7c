# secondcron — every target a user or CI needs. `make help` lists them.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Node.js 24 LTS for every target: the official build, installed once from the npm registry into
# ~/.cache/secondcron/nodejs (test/cluster/install-node.sh); its npm and npx come first on PATH, so
# npm ci, npx tsc and every script or test that runs `node` use it too, whatever node the machine has.
NODE_DIR    := $(shell test/cluster/install-node.sh | tail -n 1)
$(if $(wildcard $(NODE_DIR)/bin/node),,$(error test/cluster/install-node.sh did not install Node.js 24 (see above)))
export PATH := $(NODE_DIR)/bin:$(PATH)
NODE        ?= $(NODE_DIR)/bin/node
KUBECONFIG  ?= $(HOME)/.kube/config
CLUSTER_DIR := .cluster
# Built once per pinned version set into ~/.cache/secondcron (outside the clone, shared by reruns).
BIN_DIR      = $(shell test/cluster/build-binaries.sh | tail -n 1)
NODE_BIN_DIR = $(shell test/cluster/build-node-binaries.sh | tail -n 1)
RELEASE_TOOLS_DIR = $(shell test/cluster/build-release-tools.sh | tail -n 1)
COSIGN_DIR   = $(shell test/cluster/build-cosign.sh | tail -n 1)
# REAL_NODE=1 make cluster-up: a real kubelet node (containerd, runc, CNI, kube-proxy) besides the fake ones.
REAL_NODE   ?=

.PHONY: help
help: ## list targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: node_modules/.package-lock.json ## install npm dependencies (npm ci)

.PHONY: binaries
binaries: ## build the test control plane from Go modules (cached in ~/.cache/secondcron)
	@test/cluster/build-binaries.sh

.PHONY: build
build: deps ## compile the operator and the kubectl plugin (dist/bin/kubectl-secondcron) to dist/
	npx tsc -p tsconfig.json
	printf '{"commit":"%s"}\n' "$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" > dist/build-info.json
	cp dist/bin/kubectl-secondcron.js dist/bin/kubectl-secondcron
	chmod +x dist/main.js dist/bin/kubectl-secondcron dist/bin/kubectl-secondcron.js

.PHONY: build-test
build-test: deps
	rm -rf build
	npx tsc -p tsconfig.test.json

.PHONY: test-unit
test-unit: build-test ## unit tests (pure core, fake clock)
	$(NODE) --test --test-reporter=spec 'build/test/unit/**/*.test.js'

.PHONY: node-binaries
node-binaries: ## build the real test node (kubelet, kube-proxy, containerd, runc, CNI; cached in ~/.cache/secondcron)
	@test/cluster/build-node-binaries.sh

.PHONY: prometheus
prometheus: ## install prometheus + promtool from Debian if missing (integration tests run them; no daemon)
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || test/cluster/apt-install.sh prometheus

.PHONY: release-tools
release-tools: ## build krew and the test OCI registry (cached in ~/.cache/secondcron)
	@test/cluster/build-release-tools.sh

.PHONY: cosign
cosign: ## build cosign from its Go module (signs and verifies releases; cached in ~/.cache/secondcron)
	@test/cluster/build-cosign.sh

.PHONY: plugin-executable
plugin-executable: build-test ## the kubectl plugin as one executable without Node.js (linux/amd64, linux/arm64) + its krew manifest → dist/release/
	$(NODE) build/release/plugin-executable.js

REGISTRY ?=
.PHONY: release
release: build-test binaries cosign ## push image + chart to REGISTRY=host[/path] (OCI), signed, with the SBOM attested; plugin executables, krew manifest, npm package → dist/release/ (docs/releasing.md)
	rm -rf dist && $(MAKE) build
	REGISTRY=$(REGISTRY) HELM=$(BIN_DIR)/helm COSIGN=$(COSIGN_DIR)/cosign release/release.sh

.PHONY: image
image: ## build the Dockerfile with buildah (no Docker) into an OCI archive in ~/.cache/secondcron, import it into the real node if one is up; last line: the image reference
	@CLUSTER_DIR=$(CLUSTER_DIR) test/image/build.sh

.PHONY: test-integration
test-integration: build build-test binaries release-tools prometheus ## integration tests against a real local control plane (one file: TESTS=test/integration/smoke.test.ts)
	SECONDCRON_BIN_DIR=$(BIN_DIR) SECONDCRON_RELEASE_TOOLS_DIR=$(RELEASE_TOOLS_DIR) $(NODE) build/test/cluster/run-integration.js $(TESTS)

.PHONY: e2e
e2e: build build-test binaries node-binaries release-tools cosign prometheus ## end-to-end: `make release` to a local registry (signed, verified), `helm install oci://…` as pods on a real kubelet node that pulls the image (root; one file: TESTS=test/e2e/<f>.test.ts)
	SECONDCRON_BIN_DIR=$(BIN_DIR) SECONDCRON_NODE_BIN_DIR=$(NODE_BIN_DIR) SECONDCRON_RELEASE_TOOLS_DIR=$(RELEASE_TOOLS_DIR) SECONDCRON_COSIGN=$(COSIGN_DIR)/cosign \
	  $(NODE) build/test/cluster/run-integration.js --real-node $(or $(TESTS),test/e2e)

.PHONY: test
test: test-unit test-integration e2e ## everything CI runs

BENCH_QUICK ?=
.PHONY: bench
bench: deps binaries prometheus ## benchmark vs the upstream CronJob controller → bench/results/ (BENCH_QUICK=1: reduced, ~6 min)
	npx tsc -p tsconfig.test.json
	SECONDCRON_BIN_DIR=$(BIN_DIR) BENCH_QUICK=$(BENCH_QUICK) $(NODE) build/bench/main.js

FREEZE_RUNS ?= 5
.PHONY: bench-freeze
bench-freeze: deps binaries ## API server frozen 30 s (SIGSTOP) FREEZE_RUNS times under 100 schedules × 1 s, two replicas: time to sustained on time per run → bench/results/freeze.json (not in CI)
	npx tsc -p tsconfig.test.json
	SECONDCRON_BIN_DIR=$(BIN_DIR) FREEZE_RUNS=$(FREEZE_RUNS) $(NODE) build/bench/freeze.js

.PHONY: bench-capacity
bench-capacity: deps binaries ## the largest rate of 1 s Jobs the control plane sustains: the floor client alone at CAPACITY_RATES (100,80,60,40) for CAPACITY_MINUTES (10) each until no create is late → bench/results/capacity.json (not in CI)
	npx tsc -p tsconfig.test.json
	SECONDCRON_BIN_DIR=$(BIN_DIR) $(NODE) build/bench/capacity.js

SOAK_MINUTES ?= 60
.PHONY: soak
soak: deps binaries ## 100 schedules × 1 s + churn + a leader handover every 10 min, RSS/heap over time → bench/results/soak.{json,svg} (SOAK_MINUTES=60; not in CI)
	npx tsc -p tsconfig.test.json
	SECONDCRON_BIN_DIR=$(BIN_DIR) SOAK_MINUTES=$(SOAK_MINUTES) $(NODE) build/bench/soak.js

.PHONY: cluster-up
cluster-up: build-test binaries $(if $(REAL_NODE),node-binaries) ## start a local control plane in the background (.cluster/kubeconfig; REAL_NODE=1: with a real node)
	SECONDCRON_BIN_DIR=$(BIN_DIR) $(if $(REAL_NODE),SECONDCRON_NODE_BIN_DIR=$(NODE_BIN_DIR)) REAL_NODE=$(REAL_NODE) \
	  $(NODE) build/test/cluster/cluster-cli.js up $(CLUSTER_DIR)

.PHONY: cluster-down
cluster-down: build-test ## stop the local control plane started by cluster-up
	$(NODE) build/test/cluster/cluster-cli.js down $(CLUSTER_DIR)

.PHONY: crd
crd: build-test binaries ## regenerate the CRD's spec.jobTemplate from the pinned API server's OpenAPI v3, then chart-sync
	SECONDCRON_BIN_DIR=$(BIN_DIR) $(NODE) build/test/crd/generate-crd.js
	$(MAKE) chart-sync

.PHONY: chart-sync
chart-sync: ## copy the CRD, alert rules and dashboard into the Helm chart (tests fail on drift)
	cp config/crd/secondcronjobs.secondcron.io.yaml helm/secondcron/files/secondcronjobs.secondcron.io.yaml
	cp grafana/alerts.yaml helm/secondcron/files/alerts.yaml
	cp grafana/dashboard.json helm/secondcron/files/dashboard.json

.PHONY: install
install: ## apply the CRD to the current cluster ($$KUBECONFIG)
	kubectl apply -f config/crd/secondcronjobs.secondcron.io.yaml
	for i in $$(seq 120); do [ "$$(kubectl get crd secondcronjobs.secondcron.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ] && exit 0; sleep 0.5; done; echo "CRD not Established" >&2; exit 1

.PHONY: run
run: build ## run one operator replica against $$KUBECONFIG, /metrics over plain HTTP (extra flags: ARGS="--log-level debug"; ARGS=--metrics-secure for the binary's default)
	$(NODE) dist/main.js --metrics-secure=false $(ARGS)

.PHONY: demo
demo: build build-test binaries ## local control plane + CRD + 3 replicas + examples; Jobs printed live (DURATION=<s> to stop)
	SECONDCRON_BIN_DIR=$(BIN_DIR) $(NODE) build/test/demo/demo.js

.PHONY: clean
clean: ## remove build output (not the binary cache)
	rm -rf dist build
