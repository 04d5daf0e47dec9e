#!/usr/bin/env bash
# bench-match: the local match runner's figures.
#   1. the runner's own CPU per game (getrusage RUSAGE_SELF of the arbiter
#      process: engines excluded) and games/min at nodes=5000, Stockfish vs
#      Stockfish, 2 concurrent games, the 8-move book, GAMES games, RUNS
#      runs; with BASE=path/to/another/arbiter, that binary's runs alternate
#      with ours (the machine may be loaded by others: compare in one run);
#   2. time losses and overruns at 1+0.01 with both cores loaded (2 concurrent
#      games: two engines think at every moment);
#   3. in-process self-play games/min of the embedded engine, when it is
#      registered as the builtin player.
# Env: ARBITER (binary, default bin/arbiter), BASE, STOCKFISH, GAMES (default
# 40), RUNS (default 2), TC_GAMES (default 40), TIMEMARGIN (ms, default 0).
set -euo pipefail
cd "$(dirname "$0")/.."
ARBITER=${ARBITER:-bin/arbiter}
BASE=${BASE:-}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
GAMES=${GAMES:-40}
RUNS=${RUNS:-2}
TC_GAMES=${TC_GAMES:-40}
TIMEMARGIN=${TIMEMARGIN:-0}
[ -x "$ARBITER" ] || { echo "bench-match: $ARBITER not built (make build)" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench-match: BASE=$BASE is not an executable" >&2; exit 1; }
[ -x "$STOCKFISH" ] || { echo "bench-match: $STOCKFISH missing (apt-get install stockfish)" >&2; exit 1; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
sf() { echo "name=$1,cmd=$STOCKFISH,option.Threads=1,option.Hash=16"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# nodes RUN BIN LABEL: one run of part 1; prints its lines, records ms/game.
nodes() {
  "$2" match --engine "$(sf sf-a)" --engine "$(sf sf-b)" --each nodes=5000 \
    --openings file=books/8moves-200.pgn,order=random,seed="$1" --games "$GAMES" --concurrency 2 \
    --quiet --ratinginterval 0 > "$out/nodes.txt"
  printf '%-5s run %d (load %s): ' "$3" "$1" "$(load)"
  grep -E '^Runner CPU' "$out/nodes.txt"
  grep -E '^Games: [0-9]+ in' "$out/nodes.txt" | sed 's/^/      /'
  grep -E '^Runner CPU' "$out/nodes.txt" | sed -E 's/^Runner CPU: ([0-9.]+) ms.*/\1/' >> "$out/$3.ms"
}

echo "== nodes=5000, Stockfish vs Stockfish, concurrency 2, 8-move book, $GAMES games x $RUNS runs"
for r in $(seq "$RUNS"); do
  nodes "$r" "$ARBITER" ours
  [ -z "$BASE" ] || nodes "$r" "$BASE" base
done
for who in ours base; do
  [ -f "$out/$who.ms" ] || continue
  awk -v who="$who" '{s+=$1; n++; v=v (n>1?", ":"") $1} END {printf "Runner CPU per game, %s: mean %.2f ms (%s)\n", who, s/n, v}' "$out/$who.ms"
done

echo "== tc=1+0.01, concurrency 2 (both cores loaded), $TC_GAMES games, timemargin ${TIMEMARGIN}ms (load: $(load))"
"$ARBITER" match --engine "$(sf sf-a)" --engine "$(sf sf-b)" --each tc=1+0.01 \
  --openings file=books/uho-200.epd,order=random,seed=2 --games "$TC_GAMES" --concurrency 2 \
  --timemargin "$TIMEMARGIN" --quiet --ratinginterval 0 > "$out/tc.txt"
grep -E '^(Games: [0-9]+ in|Runner CPU)' "$out/tc.txt"

echo "== builtin self-play (in-process), nodes=5000, concurrency 2"
if "$ARBITER" match --engine name=a,builtin --engine name=b,builtin --each nodes=5000 \
  --openings file=books/uho-200.epd --games 20 --concurrency 2 --quiet --ratinginterval 0 > "$out/self.txt" 2>&1; then
  grep -E '^(Games: [0-9]+ in|Runner CPU)' "$out/self.txt"
else
  echo "n/a: $(tail -1 "$out/self.txt")"
fi
