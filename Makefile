# Arbiter — every entry point a developer or CI needs.
GO      ?= go
BIN     ?= bin/arbiter
PKGS    ?= ./...
# The x86-64 level of the machine that builds: v3 (AVX2, BMI1/2, LZCNT,
# MOVBE, FMA, F16C: CPUs since 2013) where its /proc/cpuinfo lists them,
# else v2 (POPCNT: any x86-64 CPU since 2009). Against v2, v3 made perft
# 2-18 % faster on the CPW positions (TZCNT, BLSR, ANDN in the move loops;
# make bench-perft, docs/perft-records.md); v2 against v1 saves a feature
# test per popcount. A binary for older machines: make build GOAMD64=v2
# (or v1, which runs anywhere); a v3 binary on a CPU without v3 stops at
# start-up saying so. Other architectures ignore GOAMD64.
GOAMD64 ?= $(shell scripts/goamd64.sh)

.PHONY: build install test unit lint bench demo generate

# -buildvcs=auto: stamp the commit (arbiter --version) even where GOFLAGS
# turns stamping off.
build:
	GOAMD64=$(GOAMD64) $(GO) build -buildvcs=auto -o $(BIN) ./cmd/arbiter

# arbiter on PATH: installed into $(go env GOBIN), else $(go env GOPATH)/bin
# (~/go/bin by default; add it to PATH once). PREFIX=/usr/local installs
# the built binary into $(PREFIX)/bin instead.
PREFIX ?=
install: build
	@if [ -n "$(PREFIX)" ]; then \
		install -d "$(PREFIX)/bin" && install -m 0755 $(BIN) "$(PREFIX)/bin/arbiter" && echo "installed $(PREFIX)/bin/arbiter"; \
	else \
		dir="$$($(GO) env GOBIN)"; [ -n "$$dir" ] || dir="$$($(GO) env GOPATH)/bin"; \
		install -d "$$dir" && install -m 0755 $(BIN) "$$dir/arbiter" && echo "installed $$dir/arbiter"; \
		case ":$$PATH:" in *":$$dir:"*) ;; *) echo "add it to PATH: export PATH=\"\$$PATH:$$dir\"";; esac; \
	fi

# The one test command (README, .ci/run): formatting and vet, the protobuf
# checks, every Go test (unit, integration with real processes, Stockfish
# differential, real Prometheus), the offline deploy checks and a bounded
# fuzz run of the parsers.
test: lint proto-check unit deploy-check
	$(MAKE) fuzz

unit: build
	$(GO) test -count=1 -timeout 30m $(PKGS)

# Go benchmarks of the hot paths (move generation, make, perft, search,
# the net's accumulator and output layer), with allocations;
# BenchmarkSearch and BenchmarkSearchNNUE print the two evaluations' nodes/s
# on the same positions one under the other. The side-by-side comparisons
# are the bench-* targets.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine/ ./engine/search/ ./engine/nnue/

# `arbiter bench` with the hand-written evaluation and with a net, alternating
# ROUNDS times: nodes and nodes/s side by side (NET: a net file; default the
# embedded one).
NET    ?=
ROUNDS ?= 3
.PHONY: bench-nnue
bench-nnue: build
	$(BIN) bench --nnue --rounds $(ROUNDS) $(if $(NET),--evalfile $(NET))

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1)
	$(GO) vet $(PKGS)
	$(MAKE) vet-cross
	$(GO) mod tidy -diff
	$(MAKE) cross

# Vet (which compiles every test too) for the platforms contributors use
# besides Linux: Linux-only test helpers carry build tags, and this keeps
# them honest. About 45 s each on a 2-core machine with a cold cache.
VETCROSS ?= darwin/arm64 windows/amd64
.PHONY: vet-cross
vet-cross:
	@set -e; for t in $(VETCROSS); do \
		echo "vet: $$t"; GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $(PKGS); \
	done

# The binary for every platform workers and users run (README: it
# cross-compiles); pure Go, so CGO is off and no toolchain is needed.
CROSS    ?= linux/amd64 linux/arm64 darwin/arm64 windows/amd64
CROSSDIR ?= bin/cross
.PHONY: cross
cross:
	@set -e; for t in $(CROSS); do \
		os=$${t%/*}; arch=$${t#*/}; ext=; if [ "$$os" = windows ]; then ext=.exe; fi; \
		echo "cross: $$t -> $(CROSSDIR)/arbiter-$$os-$$arch$$ext"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -o $(CROSSDIR)/arbiter-$$os-$$arch$$ext ./cmd/arbiter; \
	done

# The demo serves on after the perft (its pages, clients through the
# connection file) until Ctrl-C.
demo: build
	$(BIN) up --workers 2 --depth 7 --keep-serving

## Engine core
.PHONY: bench-perft perft-full fuzz

# Our perft beside Stockfish's (needs /usr/games/stockfish) and, given their
# binaries, perft_cpu_2026 (PERFT_CPU_2026=path) and ellxor/perft
# (ELLXOR_PERFT=path): the six CPW positions, one thread, no hash,
# interleaved, every count checked; then ours at start position depth 8
# with --hash 256 on one thread: CPU seconds and the table's hit rate.
bench-perft: build
	scripts/bench-perft.sh

# The README's figures from real runs of this build: the perft examples'
# output (scripts/readmeperft) and make bench-perft's table
# (README blocks perft-examples and bench-perft; minutes: Stockfish's
# perft 7 twice).
.PHONY: readme-figures
readme-figures: build
	$(GO) run ./scripts/readmeperft -arbiter $(BIN) -readme README.md
	scripts/bench-perft.sh -readme README.md

# Every perft suite position at every depth (hours of CPU; not run in CI).
perft-full: build
	ARBITER_PERFT_FULL=1 $(GO) test -count=1 -timeout 0 -run 'Suite|Stats' ./engine/

# Bounded fuzzing of the text parsers and of the coordinator's request
# handling. The budgets are execution counts (about 10 s each here), not
# durations: with a duration, Go 1.26's fuzz coordinator can report its own
# deadline as a failing test (go.dev/issue/75804, fixed in Go 1.27).
# FUZZTIME (a duration such as 5m, or a count such as 1000000x) overrides
# every budget for longer local runs.
# The book, engine-output, bench-output and unpack targets are slower per
# execution (they replay games, run regular expressions, write trees):
# their budgets are 8-15 s each here (about 55 s together, measured with
# each target alone on this 2-core machine; FuzzUnpack spends most of its
# time starting up).
FUZZ_PARSER_EXECS ?= 200000x
FUZZ_REQUEST_EXECS ?= 15000x
FUZZ_BOOK_EXECS ?= 10000x
FUZZ_OUTPUT_EXECS ?= 30000x
FUZZ_UNPACK_EXECS ?= 2000x
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzParseFEN -fuzztime=$(or $(FUZZTIME),$(FUZZ_PARSER_EXECS)) ./engine/
	$(GO) test -run='^$$' -fuzz=FuzzParseUCIMove -fuzztime=$(or $(FUZZTIME),$(FUZZ_PARSER_EXECS)) ./engine/
	$(GO) test -run='^$$' -fuzz=FuzzParseSAN -fuzztime=$(or $(FUZZTIME),$(FUZZ_PARSER_EXECS)) ./engine/
	$(GO) test -run='^$$' -fuzz=FuzzRequests -fuzztime=$(or $(FUZZTIME),$(FUZZ_REQUEST_EXECS)) ./coordinator/
	$(GO) test -run='^$$' -fuzz='^FuzzBookEPD$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_BOOK_EXECS)) ./match/
	$(GO) test -run='^$$' -fuzz='^FuzzBookPGN$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_BOOK_EXECS)) ./match/
	$(GO) test -run='^$$' -fuzz='^FuzzUCIInfo$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_OUTPUT_EXECS)) ./match/
	$(GO) test -run='^$$' -fuzz='^FuzzParsers$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_OUTPUT_EXECS)) ./base/benchparse/
	$(GO) test -run='^$$' -fuzz='^FuzzUnpack$$' -fuzztime=$(or $(FUZZTIME),$(FUZZ_UNPACK_EXECS)) ./worker/
	@# Each kind's own fuzz targets (kinds/*/), found rather than listed.
	@set -e; for f in $$(grep -l '^func Fuzz' kinds/*/*_test.go); do \
		for fn in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "$(GO) test -run='^$$' -fuzz='^$$fn\$$' ./$$(dirname $$f)/"; \
			$(GO) test -run='^$$' -fuzz="^$$fn\$$" -fuzztime=$(or $(FUZZTIME),$(FUZZ_PARSER_EXECS)) ./$$(dirname $$f)/; \
		done; \
	done

## Cluster
.PHONY: proto-check bench-cluster

generate:
	$(GO) tool -modfile=tools/go.mod buf generate

proto-check:
	GO=$(GO) scripts/proto-check.sh

bench-cluster: build
	scripts/bench-cluster.sh

## Deploy
.PHONY: deploy-check

# Offline checks of deploy/: Dockerfile and .dockerignore (BuildKit parser),
# compose.yaml (compose-go), kustomize base and overlay (krusty + strict
# k8s.io/api decoding), Prometheus config and alert rules (promtool). The
# tests are their own module (deploy/go.mod), so they need their own run.
deploy-check:
	@if command -v promtool >/dev/null; then \
		set -e; \
		promtool check rules deploy/prometheus/alerts.yml; \
		promtool test rules deploy/prometheus/alerts_test.yml; \
		promtool check config deploy/prometheus/prometheus.yml; \
	else echo "deploy-check: promtool not found (Debian package prometheus): skipping the rule checks"; fi
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 -timeout 10m ./...

## Match
.PHONY: bench-match

# Local match runner figures: games/min and the runner's own CPU per game at
# nodes=5000 (Stockfish, 2 concurrent games, the 8-move book; BASE=another
# arbiter binary and FASTCHESS=a fastchess binary alternate their runs with
# ours; BASE is also run in pairs with ours, at the same time, which shows
# differences of 1-2 ms per game through others' load), time losses at
# 1+0.01 with both cores loaded, builtin self-play games/min. Needs Debian's
# stockfish.
bench-match: build
	ARBITER=$(BIN) BASE=$(BASE) FASTCHESS=$(FASTCHESS) scripts/bench-match.sh

## Datagen
.PHONY: bench-datagen

# DATAGEN throughput in positions per CPU-second of the embedded engine at
# nodes=5000: the engine's own searches (arbiter uci), arbiter datagen, the
# farm (arbiter up --workers 2, submit, pull) and its overhead beyond the
# searches; with FASTCHESS=a fastchess binary, OpenBench's way (fastchess
# self-play of arbiter uci from genfens-like openings) and the ratio. See
# scripts/bench-datagen.sh and docs/datagen.md.
bench-datagen: build
	ARBITER=$(BIN) FASTCHESS=$(FASTCHESS) GO=$(GO) scripts/bench-datagen.sh
