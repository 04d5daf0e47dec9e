# Arbiter — every entry point a developer or CI needs.
GO      ?= go
BIN     ?= bin/arbiter
PKGS    ?= ./...

.PHONY: build test lint bench bench-perft demo generate fuzz

build:
	$(GO) build -o $(BIN) ./cmd/arbiter

test: build
	$(GO) vet $(PKGS)
	$(GO) test -count=1 -timeout 25m $(PKGS)

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1)
	$(GO) vet $(PKGS)

demo: build
	$(BIN) up --workers 2 --depth 7

## Cluster
.PHONY: proto-check bench-cluster

generate:
	$(GO) tool -modfile=tools/go.mod buf generate

proto-check:
	GO=$(GO) scripts/proto-check.sh

bench-cluster: build
	scripts/bench-cluster.sh
