# Muster: build, test, benchmark and fuzz every module of the workspace.
#
# go-choria v0.30.0 is not in the checksum database, so its sums are trusted from the proxy.
# Each module is driven on its own (GOWORK=off, local replace directives) so -mod=mod can fill in
# any sum a fresh machine lacks; go.work remains for editors and ad-hoc commands.
export GONOSUMDB := github.com/choria-io
export GOFLAGS := -mod=mod
export GOWORK := off

# pkg, coordinator and edge are what ships; sandbox is the lab that tests them (fleet, stack,
# suites, simulator, benchmarks); tools builds and publishes (packages, bench-report).
MODULES := pkg coordinator edge sandbox tools
# -race costs ~10x CPU; on 2 cores it still fits CI's budget. RACE= disables it.
RACE ?= -race
TESTFLAGS ?=
BENCHTIME ?= 1s
FUZZTIME ?= 5m
# Extra flags for the fuzz run, e.g. FUZZFLAGS='-parallel 1' on a shared machine.
FUZZFLAGS ?=
# Random pairs `make fuzz` compares against the real librpm (make test runs the default 200000).
LIBRPM_PAIRS ?= 2000000
# staticcheck is pinned and installed by `make lint` itself into bin/.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(CURDIR)/bin/staticcheck-$(STATICCHECK_VERSION)

.PHONY: all build test bench fuzz lint tools deps run

all: build

deps:
	@for m in $(MODULES); do (cd $$m && go mod download) || exit 1; done

# BUILDFLAGS go to every go build (make packages sets them).
BUILDFLAGS ?=
build:
	@mkdir -p bin
	@for m in $(MODULES); do \
		if [ -d $$m/cmd ]; then (cd $$m && go build $(BUILDFLAGS) -o ../bin/ ./cmd/...) || exit 1; fi; \
	done

# packages: .deb and .rpm of muster-coordinator and muster-edge in dist/ (what they hold:
# tools/packaging/README.md). bin/ is rebuilt as the packages ship it: without cgo (one binary
# for Debian 12 and el9), position-independent, without symbol table. The version is read from
# the binaries (0.0.0~git<commit time>.<commit> between releases); PACKAGE_VERSION=1.2.0 sets it.
PACKAGE_BUILDFLAGS := -trimpath -buildmode=pie -ldflags=-s
PACKAGE_VERSION ?=
.PHONY: packages
packages:
	@$(MAKE) --no-print-directory build CGO_ENABLED=0 BUILDFLAGS='$(PACKAGE_BUILDFLAGS)'
	bin/muster-package --root . --bin bin --out dist \
		$(if $(PACKAGE_VERSION),--version $(PACKAGE_VERSION))

# pkg/rpmversion's differential against the real librpm needs librpm's headers and cgo; without
# them the pkg module is tested without it.
test: build
	@set -e; for m in $(MODULES); do \
		echo "== test $$m"; \
		tags=; \
		if [ $$m = pkg ] && [ "$$(go env CGO_ENABLED)" = 1 ] && pkg-config --exists rpm 2>/dev/null; then \
			tags="-tags librpm"; echo "   (librpm found: with the librpm differential)"; \
		fi; \
		(cd $$m && go test $(RACE) -count=1 -timeout 20m $$tags $(TESTFLAGS) ./...); \
	done
	@$(MAKE) --no-print-directory sim
	@$(MAKE) --no-print-directory sim SEEDS=300 SIMPROFILE=3dc

# sandbox/edgebench runs muster-edge from bin/ against labs of 1,000 and 10,000 emulated nodes
# (minutes, hence the timeout); with MUSTER_CHORIA_PROVISIONER_BIN=/path/to/choria-provisioner it
# runs choria-provisioner side by side (never built here). MUSTER_BENCH_NODES=1000 limits the lab
# sizes.
bench: build
	@set -e; for m in $(MODULES); do \
		echo "== bench $$m"; \
		(cd $$m && go test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -timeout 60m ./...); \
	done

# bench-report: the figures of docs/performance.md, as markdown on stdout (progress on stderr);
# tools/benchreport runs the sandbox's and the coordinator's benchmarks, each as its own go test:
# muster-edge against choria-provisioner at 1,000 and 10,000 nodes, cluster against standalone,
# an edge 150 ms from the coordinators, ten regions of 10,000 nodes on a 3-datacenter cluster, the
# failover stall and the ledger at 1,000,000 nodes, each row with the command that reproduces it;
# about 15 minutes on 2 otherwise idle cores, and 5 more for the ten regions. choria-provisioner is never built here:
# MUSTER_CHORIA_PROVISIONER_BIN names its binary, and without it its rows read "not run"
# (MUSTER_ANCHOR_BIN, its deprecated old name, still works for one release).
# BENCHREPORTFLAGS=--quick checks the tooling at tiny sizes in minutes.
MUSTER_CHORIA_PROVISIONER_BIN ?= $(MUSTER_ANCHOR_BIN)
BENCHREPORTFLAGS ?=
.PHONY: bench-report
bench-report: build
	@bin/muster-benchreport --root . --choria-provisioner '$(MUSTER_CHORIA_PROVISIONER_BIN)' $(BENCHREPORTFLAGS)

# fuzz installs Debian's librpm-dev if it is missing, compares $(LIBRPM_PAIRS) random pairs with
# the real librpm, then runs every fuzz target of every module for $(FUZZTIME) each (.ci/fuzz
# finds them in the test files).
fuzz:
	@if ! pkg-config --exists rpm 2>/dev/null; then \
		echo "== installing librpm-dev"; \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq librpm-dev pkg-config >/dev/null; \
	fi
	@echo "== librpm differential ($(LIBRPM_PAIRS) pairs)"
	cd pkg && go test -count=1 -tags librpm -run 'TestLibrpm' -v ./rpmversion/ -librpm.pairs=$(LIBRPM_PAIRS)
	MODULES='$(MODULES)' .ci/fuzz $(FUZZTIME) $(FUZZFLAGS)

# fuzz-short: every target for $(FUZZSHORT), without -race (make test already runs each seed
# corpus as tests). Not in .ci/run: its instrumented build costs a cold machine five minutes.
FUZZSHORT ?= 3s
.PHONY: fuzz-short
fuzz-short:
	MODULES='$(MODULES)' .ci/fuzz $(FUZZSHORT) $(FUZZFLAGS)

$(STATICCHECK):
	@mkdir -p bin/.staticcheck
	GOBIN=$(CURDIR)/bin/.staticcheck go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/.staticcheck/staticcheck $@

# lint: go vet, staticcheck and a `go mod tidy` check per module, then gofmt over all of them.
lint: $(STATICCHECK)
	@set -e; for m in $(MODULES); do \
		echo "== lint $$m"; \
		(cd $$m && go vet ./... && $(STATICCHECK) ./... && go mod tidy -diff); \
	done
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# run is the project's main job on one machine: build, then a sandbox lab in regions eu and us
# (real and emulated nodes, some needing an upgrade, a few faulty), three muster-coordinator
# members and one cluster-mode muster-edge per region with the sample helper, with live
# progress, a summary and the sandbox report; the cluster keeps running (commands to try are
# printed) until Ctrl-C stops every process.
# RUNDIR (default: a fresh temporary directory) keeps the lab, the logs and the report, some
# hundreds of MB: the run ends saying where, how much, and the rm -rf that removes it;
# RUNFLAGS go to `muster-sandbox run` (e.g. RUNFLAGS='--emulated 1000 --exit', '--exit --failover').
RUNDIR ?=
RUNFLAGS ?=
run: build
	@dir="$(RUNDIR)"; [ -n "$$dir" ] || dir=$$(mktemp -d "$${TMPDIR:-/tmp}/muster-run.XXXXXX") || exit 1; \
	echo "== run directory: $$dir"; \
	exec bin/muster-sandbox run --dir "$$dir" $(RUNFLAGS)

# chaos: the end-to-end chaos suite (sandbox/chaos): 3 coordinator processes built with the
# test-only failpoints (never a release build), edges in eu (two) and us, a lab with real and
# emulated nodes; ROUNDS rounds of faults, alone then mixed, checked after every round. The
# seed is printed first; SEED=0 picks one. CHAOSFLAGS e.g. '--emulated 500 --faults edge-sigstop'.
# A run that may draw rolling-upgrade (the default) starts on the previous protocol's commit
# (sandbox/stack/previous), built once from the git history: a shallow clone cannot run it.
ROUNDS ?= 20
SEED ?= 0
CHAOSFLAGS ?=
.PHONY: chaos
chaos:
	@mkdir -p bin
	cd sandbox && go build -o ../bin/muster-sandbox ./cmd/muster-sandbox
	cd sandbox && ../bin/muster-sandbox chaos --rounds $(ROUNDS) --seed $(SEED) $(CHAOSFLAGS)

# sim: the deterministic simulator of the lease protocol (sandbox/sim): SEEDS seeds on every
# core, without -race (go test ./... runs 20 with it); a failing seed prints its trace and the
# command that replays it. SIMPROFILE places members and edges in datacenters: lan, 3dc or
# far-region (sandbox/sim/profile.go). make test runs 2000 seeds on lan and 300 on 3dc.
SEEDS ?= 2000
SIMPROFILE ?= lan
.PHONY: sim
sim:
	@echo "== sim ($(SEEDS) seeds, $(SIMPROFILE))"
	cd sandbox && go run ./cmd/muster-sim --seeds $(SEEDS) --profile $(SIMPROFILE)
