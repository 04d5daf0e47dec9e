#!/usr/bin/env bash
# The Debian ladder under a neutral runner (issue 30): the embedded engine
# (`arbiter uci`, its default net) against Toga II 3.0, GNU Chess and
# Phalanx, GAMES games each at 5+0.05, concurrency 2, the 8-move book in
# random order (seed 2026), the opponents' own books off.
#
#   FASTCHESS=/path/to/fastchess [CUTECHESS=/path/to/cutechess-cli] \
#       docs/strength/ladder-fastchess.sh [OUT_DIR] [GAMES]
#
# Toga II and GNU Chess (Debian's toga2 and gnuchess) play under fastchess,
# built from its sources (github.com/Disservin/fastchess, `make`). Phalanx
# (Debian's phalanx, `-b- -l-`: no book, no learning file) speaks only
# xboard, which fastchess does not: it plays under cutechess-cli when
# CUTECHESS names one, and is skipped with that said otherwise. Debian has
# no cutechess package; cutechess-cli was built from github.com/cutechess/
# cutechess at 5e84232be4546aaedc9d87a96c91867a1da06ada (v1.5.1-5-g5e84232b)
# against Debian 12's Qt 6.4.2 (its README asks for 6.8; the CLI builds and
# plays with 6.4), the GUI left unbuilt:
#
#   apt-get install -y --no-install-recommends cmake qt6-base-dev qt6-svg-dev
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWITH_TESTS=OFF
#   make -C build -j2 cli              # -> build/cutechess-cli
#
# (qt6-svg-dev only because CMakeLists.txt asks for every Qt module the GUI
# uses.) cutechess-cli gets the same conditions as fastchess: tc=5+0.05,
# the same book, order=random -srand 2026 (a different shuffle: the two
# runners draw their openings with their own generators), -rounds GAMES/2
# -games 2 -repeat, concurrency 2, -recover, PGN out.
#
# ONLY="toga2" plays only the opponents named; EXTRA="option.UseNNUE=false"
# passes options to our engine (the hand-written evaluation, for a
# comparison). GAMES may also be given in the environment (GAMES=2 for a
# check of the script). Reports: OUT_DIR/ladder-NAME.log, games
# OUT_DIR/ladder-NAME.pgn; each opponent's summary (W-L-D, Elo, time
# losses by side) is printed. Defaults: docs/strength/out, 200 games.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$repo/docs/strength/out}
games=${2:-${GAMES:-200}}
fastchess=${FASTCHESS:-fastchess}
cutechess=${CUTECHESS:-}
if [ -n "$cutechess" ] && ! [ -x "$cutechess" ]; then
	echo "CUTECHESS=$cutechess: not an executable file (build cutechess-cli as the header of $0 says)" >&2
	exit 2
fi
only=${ONLY:-toga2 gnuchess phalanx}
read -r -a extra <<<"${EXTRA:-}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
(cd "$repo" && make build >/dev/null)
# fastchess writes its config.json (and crash files) where it runs: there,
# not in the work tree.
cd "$out"
"$repo/bin/arbiter" bench 2>&1 | tail -1

find_engine() {
	command -v "$1" 2>/dev/null || { [ -x "/usr/games/$1" ] && echo "/usr/games/$1"; } || true
}
# time_losses LOG: the games lost on time, by side, from the "Finished game
# N (WHITE vs BLACK): R {White loses on time}" lines both runners print.
time_losses() {
	awk '/^Finished game .*loses on time/ {
		n++; w = $0; sub(/^[^(]*\(/, "", w); sub(/\).*$/, "", w); split(w, p, " vs ")
		if ($0 ~ /White loses on time/) by[p[1]]++; else by[p[2]]++
	}
	END {
		s = ""; for (e in by) s = s (s == "" ? "" : ", ") e " " by[e]
		printf "time losses: %d%s\n", n, (s == "" ? "" : " (" s ")")
	}' "$1"
}

# ladder_cutechess NAME PATH: Phalanx (xboard) under cutechess-cli, with the
# conditions the fastchess matches below have.
ladder_cutechess() {
	local name=$1 path=$2 log=$out/ladder-$1.log
	# EXTRA's option.X=Y is spelled the same in both runners.
	"$cutechess" -engine cmd="$repo/bin/arbiter" arg=uci name=arbiter proto=uci "${extra[@]}" \
		-engine cmd="$path" arg=-b- arg=-l- name="$name" proto=xboard \
		-each tc=5+0.05 \
		-openings file="$repo/books/8moves-200.pgn" format=pgn order=random -srand 2026 \
		-rounds $((games / 2)) -games 2 -repeat -concurrency 2 -recover -ratinginterval 20 \
		-pgnout "$out/ladder-$name.pgn" >"$log" 2>&1 || echo "$name: cutechess-cli exited $? (see $log)"
	echo "== $name (cutechess-cli)"
	time_losses "$log"
	grep -E '^(Score of|Elo difference)' "$log" | tail -2
	grep -E 'illegal move|disconnects|connection stalls' "$log" | grep '^Finished game' || true
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
		# Phalanx speaks only xboard, fastchess only UCI: cutechess-cli
		# (which speaks both) runs it, when there is one.
		if [ -z "$cutechess" ]; then
			echo "phalanx: xboard only, which fastchess does not speak; set CUTECHESS=/path/to/cutechess-cli (see the header of $0), or run ONLY=phalanx docs/strength/run.sh (arbiter match)"
			continue
		fi
		ladder_cutechess "$name" "$path"
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
	echo "== $name (fastchess)"
	time_losses "$out/ladder-$name.log"
	grep -A4 "^Results" "$out/ladder-$name.log" | tail -5
done
