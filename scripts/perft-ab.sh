#!/usr/bin/env bash
# Compares two builds of arbiter on the perft benchmark positions: each
# position's perft (one thread, no hash) by A then B, ROUNDS times, and
# prints the best CPU seconds of each and B's speed relative to A.
# For a change to the perft core: build main and the change with make
# build (same GOAMD64), then
#   scripts/perft-ab.sh /tmp/arbiter-main bin/arbiter 2
# Compare binaries, not go test -c builds: two test binaries whose machine
# code was identical timed 15 % apart here (docs/perft-records.md).
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 ARBITER_A ARBITER_B [ROUNDS]" >&2
	exit 2
fi
A=$1 B=$2 ROUNDS=${3:-2}
for bin in "$A" "$B"; do
	[ -x "$bin" ] || { echo "$0: $bin: not an executable" >&2; exit 2; }
done
positions=(
	"start|rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1|7"
	"Kiwipete|r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1|6"
	"position 3|8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1|8"
	"position 4|r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1|6"
	"position 4|r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1|7"
	"position 5|rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8|6"
	"position 6|r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10|6"
)
# "NODES SECONDS": the node count and CPU seconds of one perft run: the
# task clock from perf stat (millisecond resolution) where perf is
# installed, else /usr/bin/time's user seconds (10 ms: too coarse for
# position 4 at depth 6, which takes about 0.26 s; its depth 7 is listed
# too).
run() {
	local out
	if command -v perf >/dev/null; then
		out=$({ perf stat -x, -e task-clock "$1" perft --threads 1 --hash 0 --fen "$2" --depth "$3"; } 2>&1)
		echo "$(echo "$out" | awk '/^Nodes:/ {print $2}') $(echo "$out" | awk -F, '/task-clock/ {printf "%.3f", $1 / 1000}')"
		return
	fi
	out=$({ /usr/bin/time -f "cpu %U" "$1" perft --threads 1 --hash 0 --fen "$2" --depth "$3"; } 2>&1)
	echo "$(echo "$out" | awk '/^Nodes:/ {print $2}') $(echo "$out" | awk '/^cpu / {print $2}')"
}
printf '%-12s %5s %10s %10s %8s\n' position depth "A (s)" "B (s)" "B speed"
for p in "${positions[@]}"; do
	IFS='|' read -r name fen depth <<<"$p"
	best_a=999999 best_b=999999 nodes_a="" nodes_b=""
	for _ in $(seq "$ROUNDS"); do
		read -r nodes_a ta <<<"$(run "$A" "$fen" "$depth")"
		read -r nodes_b tb <<<"$(run "$B" "$fen" "$depth")"
		if [ "$nodes_a" != "$nodes_b" ]; then
			echo "$name: A counts $nodes_a, B counts $nodes_b" >&2
			exit 1
		fi
		best_a=$(awk -v a="$ta" -v b="$best_a" 'BEGIN { print (a < b ? a : b) }')
		best_b=$(awk -v a="$tb" -v b="$best_b" 'BEGIN { print (a < b ? a : b) }')
	done
	printf '%-12s %5s %10s %10s %8s\n' "$name" "$depth" "$best_a" "$best_b" "$(awk -v a="$best_a" -v b="$best_b" 'BEGIN { printf "%.3f", a / b }')"
done
