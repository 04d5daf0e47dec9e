#!/usr/bin/env bash
# bench-match: the local match runner's figures.
#   1. the runner's own CPU per game (utime+stime of the runner process from
#      /proc/PID/stat, sampled until it exits: its threads, not the engines)
#      and games/min at nodes=5000, Stockfish vs Stockfish, 2 concurrent
#      games, the 8-move book, GAMES games, RUNS runs; with
#      BASE=path/to/another/arbiter and FASTCHESS=path/to/fastchess, their
#      runs alternate with ours, measured the same way (the machine may be
#      loaded by others: compare within one run);
#   2. time losses and overruns at 1+0.01 with both cores loaded (2 concurrent
#      games: two engines think at every moment);
#   3. in-process self-play games/min of the embedded engine, when it is
#      registered as the builtin player;
#   4. how late the runner sees a move (clock accuracy): Stockfish at movetime=50,
#      2 concurrent games, LAT_GAMES games with HOGS busy loops beside the
#      engines; the move times it records (PGN, ms) less 50 ms, p50/p90/p99,
#      ours and BASE alternating. (Stockfish's own overshoot is in it too.)
#   5. with BASE: part 1 in pairs, ours and BASE at the same time, one game
#      at a time each (two games on two cores, as in part 1), GAMES/2 games
#      at one seed, RUNS pairs with the places swapped in turn. Both see the
#      same load, so a difference of 1-2 ms per game shows even when others'
#      load moves the alternating figures of part 1 by 10 ms.
# Env: ARBITER (binary, default bin/arbiter), BASE, FASTCHESS, STOCKFISH,
# GAMES (default 40, even), RUNS (default 2), TC_GAMES (default 40),
# TIMEMARGIN (ms, default 0), HOGS (default 2), LAT_GAMES (default 6). fastchess is not packaged by Debian: build it
# from its sources (github.com/Disservin/fastchess, `make`) and pass the path.
set -euo pipefail
cd "$(dirname "$0")/.."
ARBITER=${ARBITER:-bin/arbiter}
BASE=${BASE:-}
FASTCHESS=${FASTCHESS:-}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
GAMES=${GAMES:-40}
RUNS=${RUNS:-2}
TC_GAMES=${TC_GAMES:-40}
TIMEMARGIN=${TIMEMARGIN:-0}
HOGS=${HOGS:-2}
LAT_GAMES=${LAT_GAMES:-6}
for v in GAMES TC_GAMES LAT_GAMES; do
  [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 && $((${!v} % 2)) -eq 0 ]] ||
    { echo "bench-match: $v=${!v}: want a positive even number (games are played in pairs)" >&2; exit 2; }
done
[ -z "$BASE" ] || [ $((GAMES % 4)) -eq 0 ] ||
  { echo "bench-match: GAMES=$GAMES: with BASE, want a multiple of 4 (each side of a pair plays GAMES/2 games, in pairs)" >&2; exit 2; }
[[ $RUNS =~ ^[0-9]+$ && $RUNS -gt 0 ]] || { echo "bench-match: RUNS=$RUNS: want a positive number" >&2; exit 2; }
[ -x "$ARBITER" ] || { echo "bench-match: $ARBITER not built (make build)" >&2; exit 1; }
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench-match: BASE=$BASE is not an executable" >&2; exit 1; }
[ -z "$FASTCHESS" ] || [ -x "$FASTCHESS" ] || { echo "bench-match: FASTCHESS=$FASTCHESS is not an executable" >&2; exit 1; }
[ -x "$STOCKFISH" ] || { echo "bench-match: $STOCKFISH missing (apt-get install stockfish)" >&2; exit 1; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
sf() { echo "name=$1,cmd=$STOCKFISH,option.Threads=1,option.Hash=16"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# cpu_of CMD...: runs CMD (output to $out/run.txt, or to $RUN_OUT) and prints
# the CPU time in ms of that process alone (its threads, not its children),
# from /proc/PID/stat sampled every 5 ms until it exits.
cpu_of() {
  python3 - "${RUN_OUT:-$out/run.txt}" "$@" <<'PY'
import os, subprocess, sys, time
tick = os.sysconf("SC_CLK_TCK")
with open(sys.argv[1], "w") as out:
    p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
    last = 0.0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            last = (int(fields[11]) + int(fields[12])) * 1000 / tick
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.005)
if p.returncode != 0:
    sys.exit(f"bench-match: {sys.argv[2]} exited with status {p.returncode}")
print(f"{last:.0f}")
PY
}

# arbiter_nodes LABEL SEED GAMES CONCURRENCY [FLAGS...]: the CPU in ms of one
# nodes=5000 match by LABEL's arbiter binary (ours or base).
arbiter_nodes() {
  local bin=$ARBITER
  [ "$1" = base ] && bin=$BASE
  cpu_of "$bin" match --engine "$(sf sf-a)" --engine "$(sf sf-b)" --each nodes=5000 \
    --openings file=books/8moves-200.pgn,order=random,seed="$2" --games "$3" --concurrency "$4" \
    --quiet --ratinginterval 0 "${@:5}"
}

# nodes RUN LABEL: one run of part 1 by LABEL (ours, base or fastchess);
# prints a line and records ms/game.
nodes() {
  local ms
  case $2 in
  ours|base)
    ms=$(arbiter_nodes "$2" "$1" "$GAMES" 2)
    games=$(grep -E '^Games: [0-9]+ in' "$out/run.txt" | sed -E 's/^Games: ([0-9]+) in ([0-9.]+)s \(([0-9.]+) games\/min\).*/\1 games in \2 s (\3 games\/min)/') ;;
  fastchess)
    local t0 t1
    t0=$(date +%s.%N)
    ms=$(cpu_of "$FASTCHESS" -engine cmd="$STOCKFISH" name=sf-a option.Threads=1 option.Hash=16 \
      -engine cmd="$STOCKFISH" name=sf-b option.Threads=1 option.Hash=16 -each tc=inf nodes=5000 proto=uci \
      -openings file=books/8moves-200.pgn format=pgn order=random -srand "$1" \
      -rounds $((GAMES / 2)) -games 2 -repeat -concurrency 2 -config outname="$out/fastchess-config.json")
    t1=$(date +%s.%N)
    games=$(awk -v g="$GAMES" -v a="$t0" -v b="$t1" 'BEGIN {printf "%d games in %.1f s (%.1f games/min)", g, b-a, g*60/(b-a)}') ;;
  esac
  awk -v ms="$ms" -v g="$GAMES" -v who="$2" -v r="$1" -v l="$(load)" -v games="$games" \
    'BEGIN {printf "%-9s run %d (load %s): %.2f ms/game (%d ms for %d games); %s\n", who, r, l, ms/g, ms, g, games}'
  awk -v ms="$ms" -v g="$GAMES" 'BEGIN {printf "%.2f\n", ms/g}' >> "$out/$2.ms"
}

echo "== nodes=5000, Stockfish vs Stockfish, concurrency 2, 8-move book, $GAMES games x $RUNS runs"
echo "   runner CPU per game: utime+stime of the runner process (/proc/PID/stat), engines excluded"
for r in $(seq "$RUNS"); do
  nodes "$r" ours
  [ -z "$BASE" ] || nodes "$r" base
  [ -z "$FASTCHESS" ] || nodes "$r" fastchess
done
for who in ours base fastchess; do
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

# latency BIN LABEL: part 4 for one runner.
latency() {
  local hogs=() i
  for i in $(seq "$HOGS"); do (while :; do :; done) & hogs+=($!); done
  "$1" match --engine "$(sf sf-a)" --engine "$(sf sf-b)" --each movetime=50 --timemargin 5000 \
    --openings file=books/8moves-200.pgn,order=random,seed=3 --games "$LAT_GAMES" --concurrency 2 \
    --maxmoves 40 --quiet --ratinginterval 0 --pgnout "$out/lat-$2.pgn" > /dev/null 2>&1 || true
  kill "${hogs[@]}" 2>/dev/null || true
  wait "${hogs[@]}" 2>/dev/null || true
  [ -s "$out/lat-$2.pgn" ] || { echo "$2: no games finished"; return; }
  grep -o '[0-9]\.[0-9]*s}' "$out/lat-$2.pgn" | tr -d 's}' | awk '{print ($1 - 0.050) * 1000}' | sort -n |
    awk -v who="$2" '{a[NR]=$1} END {if (NR == 0) {print who ": no moves"; exit} printf "%-5s %d moves, late by p50 %.0f, p90 %.0f, p99 %.0f, max %.0f ms\n", who, NR, a[int(NR*0.5)+0], a[int(NR*0.9)], a[int(NR*0.99)], a[NR]}'
}

echo "== clock accuracy: movetime=50, concurrency 2, $HOGS busy loops beside the engines, $LAT_GAMES games"
latency "$ARBITER" ours
[ -z "$BASE" ] || latency "$BASE" base

# pair RUN: part 5, one pair of runs.
pair() {
  local g=$((GAMES / 2)) first=ours second=base
  [ $(($1 % 2)) -eq 0 ] && first=base second=ours
  local who pid pids=() ms=()
  for who in $first $second; do
    RUN_OUT="$out/pair-$who.txt" arbiter_nodes "$who" "$1" "$g" 1 --state "$out/pair-$who.state" > "$out/pair-$who.ms" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  for who in ours base; do ms+=("$(cat "$out/pair-$who.ms")"); done
  awk -v a="${ms[0]}" -v b="${ms[1]}" -v g="$g" -v r="$1" -v l="$(load)" -v diffs="$out/pairs.diff" \
    'BEGIN {printf "pair %d (load %s): ours %.2f, base %.2f ms/game (ours - base %+.2f)\n", r, l, a/g, b/g, (a-b)/g
            printf "%.4f\n", (a-b)/g >> diffs}'
}

if [ -n "$BASE" ]; then
  echo "== pairs: ours and BASE at the same time, 1 game at a time each, $((GAMES / 2)) games, nodes=5000"
  for r in $(seq "$RUNS"); do pair "$r"; done
  awk '{s+=$1; n++} END {printf "Runner CPU per game, ours - base: mean %+.2f ms over %d pairs\n", s/n, n}' "$out/pairs.diff"
fi
