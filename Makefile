# Muster: build, test, benchmark and fuzz every module of the workspace.
#
# go-choria v0.30.0 is not in the checksum database, so its sums are trusted from the proxy.
# Each module is driven on its own (GOWORK=off, local replace directives) so -mod=mod can fill in
# any sum a fresh machine lacks; go.work remains for editors and ad-hoc commands.
export GONOSUMDB := github.com/choria-io
export GOFLAGS := -mod=mod
export GOWORK := off

MODULES := pkg coordinator edge sandbox
# -race costs ~10x CPU; on 2 cores it still fits CI's budget. RACE= disables it.
RACE ?= -race
TESTFLAGS ?=
BENCHTIME ?= 1s
FUZZTIME ?= 5m

.PHONY: all build test bench fuzz lint tools deps

all: build

deps:
	@for m in $(MODULES); do (cd $$m && go mod download) || exit 1; done

build:
	@mkdir -p bin
	@for m in $(MODULES); do \
		if [ -d $$m/cmd ]; then (cd $$m && go build -o ../bin/ ./cmd/...) || exit 1; fi; \
	done

test: build
	@set -e; for m in $(MODULES); do \
		echo "== test $$m"; \
		(cd $$m && go test $(RACE) -count=1 -timeout 20m $(TESTFLAGS) ./...); \
	done

bench:
	@set -e; for m in $(MODULES); do \
		echo "== bench $$m"; \
		(cd $$m && go test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...); \
	done

lint:
	@set -e; for m in $(MODULES); do (cd $$m && go vet ./...); done
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
