#!/usr/bin/env bash
# The Debian ladder under a neutral runner (issue 30): the embedded engine
# (`arbiter uci`, its default net) against Toga II 3.0, GNU Chess and
# Phalanx, GAMES games each at 5+0.05 under fastchess, concurrency 2, the
# 8-move book, the opponents' own books off.
#
#   FASTCHESS=/path/to/fastchess docs/strength/ladder-fastchess.sh [OUT_DIR] [GAMES]
#
# fastchess is built from its sources (github.com/Disservin/fastchess,
# `make`); the opponents are Debian's toga2 and gnuchess (phalanx speaks
# only xboard, which fastchess does not: it is skipped with that said). ONLY="toga2"
# plays only the opponents named; EXTRA="option.UseNNUE=false" passes
# options to our engine (the hand-written evaluation, for a comparison).
# Reports: OUT_DIR/ladder-NAME.log, games OUT_DIR/ladder-NAME.pgn.
# Defaults: docs/strength/out, 200 games.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/docs/strength/out}
games=${2:-200}
fastchess=${FASTCHESS:-fastchess}
only=${ONLY:-toga2 gnuchess phalanx}
read -r -a extra <<<"${EXTRA:-}"
mkdir -p "$out"
(cd "$repo" && make build >/dev/null)
"$repo/bin/arbiter" bench 2>&1 | tail -1

find_engine() {
	command -v "$1" 2>/dev/null || { [ -x "/usr/games/$1" ] && echo "/usr/games/$1"; } || true
}
for name in $only; do
	path=$(find_engine "$name")
	if [ -z "$path" ]; then
		echo "$name: not installed (apt-get install $name), skipped"
		continue
	fi
	case $name in
	toga2) opp=(-engine cmd="$path" name=toga2 proto=uci option.OwnBook=false) ;;
	gnuchess) opp=(-engine cmd="$path" args=--uci name=gnuchess proto=uci option.OwnBook=false) ;;
	phalanx)
		# fastchess speaks UCI only and Phalanx only xboard (Debian has no
		# cutechess, the other neutral runner that speaks both).
		echo "phalanx: xboard only, which fastchess does not speak; run ONLY=phalanx docs/strength/run.sh (arbiter match)"
		continue
		;;
	*) echo "$name: no settings for it here, skipped"; continue ;;
	esac
	"$fastchess" -engine cmd="$repo/bin/arbiter" args=uci name=arbiter proto=uci "${extra[@]}" \
		"${opp[@]}" \
		-each tc=5+0.05 \
		-openings file="$repo/books/8moves-200.pgn" format=pgn order=random -srand 2026 \
		-rounds $((games / 2)) -games 2 -repeat -concurrency 2 -recover -ratinginterval 20 \
		-pgnout file="$out/ladder-$name.pgn" >"$out/ladder-$name.log" 2>&1 || true
	echo "== $name"
	grep -c "loses on time" "$out/ladder-$name.log" | sed 's/^/time losses: /' || true
	grep -A4 "^Results" "$out/ladder-$name.log" | tail -5
done
