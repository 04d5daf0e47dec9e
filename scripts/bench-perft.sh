#!/usr/bin/env bash
# Arbiter's perft against Stockfish's "go perft", same machine, same run.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build
exec go run ./scripts/benchperft -arbiter bin/arbiter -stockfish "${STOCKFISH:-/usr/games/stockfish}" "$@"
