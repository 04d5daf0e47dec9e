#!/usr/bin/env bash
# Arbiter's perft beside Stockfish's "go perft" and, when their binaries are
# named, perft_cpu_2026 (PERFT_CPU_2026=path) and ellxor/perft
# (ELLXOR_PERFT=path): same machine, same run, interleaved, every count checked.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
exec go run ./scripts/benchperft -arbiter bin/arbiter -stockfish "${STOCKFISH:-/usr/games/stockfish}" "$@"
