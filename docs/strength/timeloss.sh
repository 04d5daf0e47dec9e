#!/usr/bin/env bash
# Time losses under a neutral runner (issue 30): the embedded engine
# (`arbiter uci`) against Toga II 3.0 under fastchess with timemargin 0 at
# 5+0.05, concurrency 1, with two busy processes beside the engines.
#
#   FASTCHESS=/path/to/fastchess docs/strength/timeloss.sh [OUT_DIR] [GAMES]
#
# fastchess is built from its sources (github.com/Disservin/fastchess,
# `make`); Toga II is Debian's toga2. The report is OUT_DIR/timeloss.log
# (each "loses on time" line names the loser and its overrun), the games
# OUT_DIR/timeloss.pgn. Defaults: docs/strength/out, 200 games.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/docs/strength/out}
games=${2:-200}
fastchess=${FASTCHESS:-fastchess}
toga=$(command -v toga2 || echo /usr/games/toga2)
mkdir -p "$out"
out=$(cd "$out" && pwd)
(cd "$repo" && make build >/dev/null)
# fastchess writes its config.json (and crash files) where it runs: there,
# not in the work tree.
cd "$out"
busy() { while :; do :; done; }
busy & b1=$!
busy & b2=$!
trap 'kill $b1 $b2' EXIT
"$fastchess" -engine cmd="$repo/bin/arbiter" args=uci name=arbiter \
	-engine cmd="$toga" name=toga2 option.OwnBook=false \
	-each proto=uci tc=5+0.05 timemargin=0 \
	-openings file="$repo/books/8moves-200.pgn" format=pgn order=random -srand 11 \
	-rounds $((games / 2)) -games 2 -repeat -concurrency 1 -ratinginterval 20 \
	-pgnout file="$out/timeloss.pgn" >"$out/timeloss.log" 2>&1
grep -E "loses on time" "$out/timeloss.log" || echo "no time losses"
grep -A4 "^Results" "$out/timeloss.log" | tail -5
