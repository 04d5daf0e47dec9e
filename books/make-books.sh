#!/usr/bin/env bash
# Rebuilds the small books shipped in books/ from the official Stockfish books
# (official-stockfish/books, CC0 1.0) copied to shared/data/books/.
# Deterministic: a fixed stride through each file, no randomness.
#   8moves-200.pgn : every 173rd game of 8moves_v3.pgn (balanced, 16 plies from
#                    the start position; usable by engines without setboard)
#   uho-200.epd    : every 1211th line of UHO_4060_v3.epd (unbalanced human
#                    openings, the kind SPRT tests use; needs setboard/FEN)
# Not rebuilt here: endgames-100.epd, 100 five- and six-piece endings
# (KRPvKR, KRPPvKR, KBPPvKB, KPPvKP, KNPvKP, KQPvKQ, KRPvKBP, KBPvKP, KQvKRP,
# KRPvKNP, KBNvKP, KRBvKR, KPPvKPP, KRvKBP, either colour) placed at random
# (seed 44) and kept when the engine scored them within 250 cp at depth 6;
# used to measure tablebases in search (docs/tablebases.md).
set -euo pipefail
src=${1:-$(dirname "$0")/../../shared/data/books}
out=$(dirname "$0")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unzip -q -o "$src/8moves_v3.pgn.zip" -d "$tmp"
unzip -q -o "$src/UHO_4060_v3.epd.zip" -d "$tmp"
# Games start at [Event; keep game numbers 0, 173, 346, ... (200 games).
awk 'BEGIN{n=-1} /^\[Event /{n++} n%173==0 && n<173*200 {print}' "$tmp/8moves_v3.pgn" > "$out/8moves-200.pgn"
awk '(NR-1)%1211==0 && NR<=1211*200' "$tmp/UHO_4060_v3.epd" > "$out/uho-200.epd"
grep -c '^\[Event ' "$out/8moves-200.pgn"
wc -l < "$out/uho-200.epd"
