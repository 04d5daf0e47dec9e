#!/usr/bin/env bash
# bench-datagen: DATAGEN's throughput in positions per CPU-second, in one run
# on this machine (the machine may be loaded by others: CPU-seconds, not wall
# time, are compared, and only within one run).
#   0. the workload's overhead inside one process (datagen's Go benchmark:
#      the engine's calls timed directly, the rest is the workload);
#   1. the engine alone: the farm's games (part 2) replayed in `arbiter uci`
#      (the embedded engine as a UCI process): every engine move searched
#      again with `go nodes NODES` from the same position after the same
#      moves, ucinewgame before each game; its CPU per search is what a
#      dataset cannot do without (the UCI text adds a little to it);
#   2. `arbiter datagen` (local, 2 batches at once) and the farm (`arbiter up
#      --workers 2`, `submit datagen --wait`, `datagen pull`): POSITIONS
#      positions of the embedded engine at NODES nodes, 8-9 random plies,
#      duplicates kept (so that every path counts the same records). CPU: the
#      processes' utime+stime (the farm's coordinator and workers, the
#      submitting and pulling clients). The overhead is the share of that CPU
#      that is not the engine's searches of the dataset's games (searches
#      in the PGN x the CPU per search of part 1): the game loop, the
#      shards, their replay, the records, and batches played but not needed
#      at the end;
#   3. with FASTCHESS=path: OpenBench's way, fastchess playing `arbiter uci`
#      against itself at NODES nodes from genfens-like openings (8-9 random
#      plies, scripts/genfens) with the same adjudication, PGN with scores;
#      its positions are the PGN's moves that datagen's default filters keep
#      (not in check, not a capture or promotion, not a mate score), counted
#      from the SAN. CPU: fastchess and its engine processes.
# Env: ARBITER (default bin/arbiter), FASTCHESS, POSITIONS (default 4000),
# NODES (default 5000), REF_GAMES (games replayed in part 1, default 0: all),
# FC_GAMES (default: about POSITIONS' worth of games), GO (default go),
# PGN_EXTRACT (default /usr/games/pgn-extract), BENCH_BATCHES (part 0's
# batches of 4 games, default 4). fastchess is not packaged by
# Debian: build it from its sources (github.com/Disservin/fastchess, `make`).
set -euo pipefail
cd "$(dirname "$0")/.."
ARBITER=${ARBITER:-bin/arbiter}
FASTCHESS=${FASTCHESS:-}
POSITIONS=${POSITIONS:-4000}
NODES=${NODES:-5000}
REF_GAMES=${REF_GAMES:-0}
PGN_EXTRACT=${PGN_EXTRACT:-/usr/games/pgn-extract}
GO=${GO:-go}
for v in POSITIONS NODES; do
  [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || { echo "bench-datagen: $v=${!v}: want a positive number" >&2; exit 2; }
done
FC_GAMES=${FC_GAMES:-$(( (POSITIONS + 49) / 50 ))}
[[ $FC_GAMES =~ ^[0-9]+$ && $FC_GAMES -gt 0 ]] || { echo "bench-datagen: FC_GAMES=$FC_GAMES: want a positive number" >&2; exit 2; }
[[ $REF_GAMES =~ ^[0-9]+$ ]] || { echo "bench-datagen: REF_GAMES=$REF_GAMES: want a number (0: all)" >&2; exit 2; }
[ -x "$ARBITER" ] || { echo "bench-datagen: $ARBITER not built (make build)" >&2; exit 1; }
[ -x "$PGN_EXTRACT" ] || { echo "bench-datagen: $PGN_EXTRACT missing (apt-get install pgn-extract)" >&2; exit 1; }
[ -z "$FASTCHESS" ] || [ -x "$FASTCHESS" ] || { echo "bench-datagen: FASTCHESS=$FASTCHESS is not an executable" >&2; exit 1; }
ARBITER=$(realpath "$ARBITER")
out=$(mktemp -d)
up_pid=
cleanup() {
  [ -z "$up_pid" ] || kill "$up_pid" 2>/dev/null || true
  rm -rf "$out"
}
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
adjudicate="win-score=400,win-moves=3,draw-move-number=40,draw-moves=8,draw-score=10,max-moves=400"

# cpu CMD...: runs CMD (stdout to $out/run.txt, stderr to $out/run.err) and
# prints its CPU seconds and those of every process it waited for
# (getrusage RUSAGE_CHILDREN).
cpu() {
  python3 - "$out/run.txt" "$out/run.err" "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as out, open(sys.argv[2], "w") as err:
    rc = subprocess.call(sys.argv[3:], stdout=out, stderr=err)
if rc != 0:
    sys.stderr.write(open(sys.argv[2]).read()[-2000:])
    sys.exit(f"bench-datagen: {sys.argv[3]} exited with status {rc}")
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{r.ru_utime + r.ru_stime:.3f}")
PY
}

# proc_cpu PID: utime+stime in seconds of a running process (its threads).
proc_cpu() { awk -v t="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / t}' "/proc/$1/stat"; }

# pgn_count FILE: "SEARCHES RECORDS" of a PGN with scores: every move with a
# score comment is a search (datagen's {book} plies and fastchess's openings
# are not); a record is a search datagen's default filters keep.
pgn_count() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
searches = records = 0
for game in re.split(r"\n(?=\[Event )", text):
    body = "\n".join(l for l in game.splitlines() if not l.startswith("["))
    prev = ""
    for m in re.finditer(r"\{([^}]*)\}|([^\s{}]+)", body):
        comment, tok = m.group(1), m.group(2)
        if tok is not None:
            if re.fullmatch(r"\d+\.+|1-0|0-1|1/2-1/2|\*", tok):
                continue
            san, last = tok, prev
            prev = tok
            continue
        score = re.match(r"\s*([+-]?M?\d+(?:\.\d+)?)/\d+", comment)
        if not score:
            continue
        searches += 1
        if last.endswith(("+", "#")) or "x" in san or "=" in san or "M" in score.group(1):
            continue
        records += 1
print(searches, records)
PY
}

echo "== DATAGEN throughput: embedded engine, nodes=$NODES, 8-9 random plies, $POSITIONS positions (load: $(load))"

# 0. inside one process: a worker's and the coordinator's work on batches
# (datagen's BenchmarkDatagenBatch, nodes=5000), the engine's Think and
# NewGame timed directly: overhead-% is the time outside them.
echo "== in process: go test -bench DatagenBatch ./datagen/ (play, shard, replay, records; nodes=5000)"
"$GO" test -run '^$' -bench DatagenBatch -benchtime "${BENCH_BATCHES:-4}x" ./datagen/ | grep -E '^Benchmark'

# 2a. arbiter datagen, local.
t0=$(date +%s.%N)
local_cpu=$(cpu "$ARBITER" datagen --engine name=dev,builtin --each "nodes=$NODES" --positions "$POSITIONS" \
  --random-plies 8-9 --random-seed 1 --concurrency 2 --format pgn --out "$out/local.pgn" --quiet)
t1=$(date +%s.%N)
read -r local_searches _ < <(pgn_count "$out/local.pgn")
grep -E '^(positions|games|speed)' "$out/run.txt" | sed 's/^/  local: /'

# 2b. the farm: arbiter up --workers 2, submit, pull.
addr=127.0.0.1:$((20000 + RANDOM % 20000))
"$ARBITER" up --workers 2 --threads 1 --listen "$addr" --data "$out/data" --token bench --http "" > "$out/up.txt" 2>&1 &
up_pid=$!
for _ in $(seq 600); do grep -q "serving" "$out/up.txt" && break; sleep 0.1; done
grep -q "serving" "$out/up.txt" || { cat "$out/up.txt"; echo "bench-datagen: arbiter up did not start" >&2; exit 1; }
sleep 3 # the workers' start-up bench is not the dataset's
up_cpu0=$(proc_cpu "$up_pid")
f0=$(date +%s.%N)
submit_cpu=$(cpu "$ARBITER" submit datagen --coordinator "$addr" --token bench --engine name=dev,builtin --each "nodes=$NODES" \
  --positions "$POSITIONS" --random-plies 8-9 --random-seed 1 --batch-games 8 --keep-duplicates --wait --json)
job=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["job_id"])' "$out/run.txt")
pull_cpu=$(cpu "$ARBITER" datagen pull "$job" --coordinator "$addr" --token bench --format text --out "$out/farm.txt")
f1=$(date +%s.%N)
up_cpu=$(awk -v a="$(proc_cpu "$up_pid")" -v b="$up_cpu0" 'BEGIN {print a - b}')
"$ARBITER" datagen pull "$job" --coordinator "$addr" --token bench --format pgn --out "$out/farm.pgn" > /dev/null 2>&1
"$ARBITER" status "$job" --coordinator "$addr" --token bench | grep -E '^(Positions|Games|Duplicates)' | sed 's/^/  farm:  /'
kill "$up_pid"; wait "$up_pid" 2>/dev/null || true; up_pid=
read -r farm_searches farm_filtered < <(pgn_count "$out/farm.pgn")
farm_records=$(wc -l < "$out/farm.txt")
[ "$farm_records" -eq "$POSITIONS" ] || { echo "bench-datagen: the farm's file holds $farm_records records, want $POSITIONS" >&2; exit 1; }
farm_cpu=$(awk -v a="$up_cpu" -v b="$submit_cpu" -v c="$pull_cpu" 'BEGIN {print a + b + c}')

# 1. the engine alone: the farm's games replayed in arbiter uci, every
# engine move searched again from the same position after the same moves
# (ucinewgame before each game, as the embedded player's NewGame), REF_GAMES
# games (0: all). pgn-extract turns the PGN's SAN into UCI moves.
"$PGN_EXTRACT" -s -Wuci "$out/farm.pgn" > "$out/farm.uci"
read -r engine_cpu ref_searches ref_same < <(python3 - "$ARBITER" "$out/farm.pgn" "$out/farm.uci" "$NODES" "$REF_GAMES" <<'PY'
import os, re, subprocess, sys
arbiter, pgn, uci, nodes, limit = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read(), sys.argv[4], int(sys.argv[5])
def games(text):
    return [g for g in re.split(r"\n(?=\[Event )", text.strip()) if g.strip()]
books = [g.count("{book}") for g in games(pgn)]
replays = []
for g in games(uci):
    fen = re.search(r'^\[FEN "([^"]*)"\]', g, re.M)
    body = " ".join(l for l in g.splitlines() if not l.startswith("["))
    moves = [t for t in body.split() if not re.fullmatch(r"1-0|0-1|1/2-1/2|\*", t)]
    replays.append(("fen " + fen.group(1) if fen else "startpos", moves))
if len(books) != len(replays):
    sys.exit(f"bench-datagen: {len(books)} games in the PGN, {len(replays)} from pgn-extract")
if limit > 0:
    books, replays = books[:limit], replays[:limit]
p = subprocess.Popen([arbiter, "uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
def say(s):
    p.stdin.write(s + "\n"); p.stdin.flush()
def until(prefix):
    for line in p.stdout:
        if line.startswith(prefix):
            return line
    sys.exit("bench-datagen: arbiter uci ended early")
def cpu():
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
say("uci"); until("uciok")
c0, n, same = cpu(), 0, 0
for book, (start, moves) in zip(books, replays):
    say("ucinewgame")
    for i in range(book, len(moves)):
        say(f"position {start} moves {' '.join(moves[:i])}" if i else f"position {start}")
        say("go nodes " + nodes)
        best = until("bestmove").split()[1]
        n += 1
        same += best == moves[i]
c1 = cpu()
say("quit"); p.wait()
print(f"{(c1 - c0) / n:.6f} {n} {same}")
PY
)

report() { # LABEL CPU RECORDS SEARCHES WALL
  awk -v who="$1" -v cpu="$2" -v rec="$3" -v s="$4" -v e="$engine_cpu" -v wall="$5" 'BEGIN {
    printf "%-10s %6d positions, %6d searches, %7.1f CPU-s (%5.1f s wall): %6.1f positions/CPU-s, overhead %5.1f %%\n",
      who, rec, s, cpu, wall, rec / cpu, 100 * (1 - e * s / cpu) }'
}
echo "== engine alone: the farm's games replayed in arbiter uci, $ref_searches searches of go nodes $NODES"
awk -v e="$engine_cpu" -v n="$ref_searches" -v same="$ref_same" 'BEGIN {
  printf "engine     %.2f ms CPU a search; %d of %d best moves are those the games played\n", 1000 * e, same, n }'
echo "== positions per CPU-second (overhead: the CPU beyond the engine's searches of the games kept)"
report local "$local_cpu" "$POSITIONS" "$local_searches" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
report farm "$farm_cpu" "$POSITIONS" "$farm_searches" "$(awk -v a="$f0" -v b="$f1" 'BEGIN {print b - a}')"
awk -v a="$up_cpu" -v b="$submit_cpu" -v c="$pull_cpu" 'BEGIN {printf "           farm CPU: coordinator and workers %.1f s, submit --wait %.2f s, pull %.2f s\n", a, b, c}'
echo "           (the farm's PGN counted as fastchess's is below: $farm_filtered positions for its $POSITIONS records, the last game cut)"

if [ -z "$FASTCHESS" ]; then
  echo "== fastchess: skipped (FASTCHESS=path/to/fastchess to compare with OpenBench's way)"
  exit 0
fi
echo "== OpenBench's way: fastchess, arbiter uci vs itself, $FC_GAMES games from genfens-like openings, concurrency 2 (load: $(load))"
"$GO" run ./scripts/genfens -n "$FC_GAMES" -seed 1 -plies 8-9 > "$out/genfens.epd"
t0=$(date +%s.%N)
fc_cpu=$(cpu "$FASTCHESS" -engine cmd="$ARBITER" args=uci name=dev-a -engine cmd="$ARBITER" args=uci name=dev-b \
  -each tc=inf nodes="$NODES" proto=uci -openings file="$out/genfens.epd" format=epd order=sequential \
  -rounds "$FC_GAMES" -games 1 -concurrency 2 -resign movecount=3 score=400 -draw movenumber=40 movecount=8 score=10 \
  -maxmoves 400 -pgnout file="$out/fc.pgn" -ratinginterval 0 -config outname="$out/fc-config.json")
t1=$(date +%s.%N)
read -r fc_searches fc_records < <(pgn_count "$out/fc.pgn")
report fastchess "$fc_cpu" "$fc_records" "$fc_searches" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')"
awk -v f="$farm_cpu" -v fr="$POSITIONS" -v c="$fc_cpu" -v cr="$fc_records" -v l="$local_cpu" 'BEGIN {
  printf "farm / fastchess: %.2fx the positions per CPU-second (local / fastchess %.2fx)\n", (fr / f) / (cr / c), (fr / l) / (cr / c) }'
