#!/usr/bin/env bash
# The strength table of the README: the embedded engine against the engines
# Debian ships, 200 games each at 5+0.05, concurrency 2, the 8-move book,
# their own opening books off. Runs from a fresh clone:
#
#   docs/strength/run.sh [OUT_DIR]        (default: docs/strength/out)
#
# It builds bin/arbiter (make build, or go build without make) and plays
# every opponent it finds: on PATH or in /usr/games (apt-get install
# gnuchess toga2 phalanx fairymax stockfish); a missing one is skipped and
# said so. Stockfish plays at Skill Level $SF_SKILL (default 5: at full
# strength no game would be close). GAMES=N plays fewer games (a quick check
# of the script: GAMES=2); ONLY="toga2 gnuchess" plays only the opponents
# named. The reports are OUT_DIR/NAME.txt, the games
# OUT_DIR/NAME.pgn, and the progress log OUT_DIR/progress.txt; the figures
# in docs/strength/*.txt are such reports.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
out=${1:-docs/strength/out}
games=${GAMES:-200}
sf_skill=${SF_SKILL:-5}
mkdir -p "$out"

if command -v make >/dev/null; then
	make build >/dev/null
else
	go build -buildvcs=auto -o bin/arbiter ./cmd/arbiter
fi
arbiter=$repo/bin/arbiter
"$arbiter" --version | head -2

# find NAME: the engine's path, on PATH or in /usr/games.
find_engine() {
	command -v "$1" 2>/dev/null || { [ -x "/usr/games/$1" ] && echo "/usr/games/$1"; } || true
}

common=(--each tc=5+0.05 --openings file=books/8moves-200.pgn,order=random,seed=2026 --games "$games"
	--concurrency 2 --ratinginterval 50)

# play NAME PROGRAM ENGINE-SPEC-TAIL: one match, logged to progress.txt.
play() {
	local name=$1 program=$2 tail=$3 path
	if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then
		return
	fi
	path=$(find_engine "$program")
	if [ -z "$path" ]; then
		echo "== $name skipped: $program not found on PATH or in /usr/games" | tee -a "$out/progress.txt"
		return
	fi
	echo "== $name $(date +%T)" | tee -a "$out/progress.txt"
	local status=0
	"$arbiter" match --engine name=arbiter,builtin --engine "name=$name,cmd=$path$tail" "${common[@]}" \
		--pgnout "$out/$name.pgn" >"$out/$name.txt" 2>&1 || status=$?
	echo "== $name done $(date +%T) exit $status" | tee -a "$out/progress.txt"
	tail -n 8 "$out/$name.txt" | grep -E '^(Elo|Games|Ptnml)' || true
}

play gnuchess gnuchess ",args=-u,option.OwnBook=false"
play toga2 toga2 ",option.OwnBook=false"
play phalanx phalanx ",args=-b- -l-,proto=xboard"
play fairymax fairymax ",proto=xboard"
play stockfish stockfish ",option.Skill Level=$sf_skill"
