#!/usr/bin/env bash
# The issue-29 acceptance run: a real coordinator and two real workers on
# loopback generate 200,000 positions of the embedded engine at nodes=5000
# from random openings; a worker and then the coordinator are SIGKILLed and
# restarted on the way; the dataset is pulled in all three formats and
# checked (scripts/datagencheck: counts, duplicates, results against the
# PGN, Stockfish legality). Resumable: rerun with RESUME=1 to restart the
# processes on the same data and wait for the same job.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
D=${D:?set D to a data directory outside the work tree, with the arbiter binary copied into it}
N=${N:-200000}
ADDR=127.0.0.1:7790
cd "$D"
BIN=$D/arbiter
export ARBITER_TOKEN=T
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a run.log; }
coord() { "$BIN" coordinator --listen $ADDR --data "$D/coord" --token T --lease-duration 10s --log-format console >>coord.log 2>&1 & echo $! > coord.pid; }
worker() { "$BIN" worker --coordinator $ADDR --token T --threads 1 --hash 16 --name "$1" --log-format console >>"$1.log" 2>&1 & echo $! > "$1.pid"; }
positions() { "$BIN" status "$JOB" --coordinator $ADDR --json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["detail"]["positions"], j["state"])' 2>/dev/null || echo "0 unknown"; }
if [ -z "${RESUME:-}" ]; then
  rm -rf coord *.log *.pid out.* job
  coord; sleep 3; worker w1; worker w2
  "$BIN" submit datagen --coordinator $ADDR --engine name=dev,builtin --positions $N --each nodes=5000 \
      --random-plies 8-9 --random-seed 29 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])' > job
  log "submitted $(cat job)"
else
  coord; sleep 3; worker w1; worker w2
fi
JOB=$(cat job)
killed_worker=${RESUME:+1} killed_coord=${RESUME:+1}
while true; do
  read -r pos state < <(positions)
  log "$JOB: $pos/$N positions, $state"
  [ "$state" = done ] && break
  if [ -z "$killed_worker" ] && [ "$pos" -ge $((N/4)) ]; then
    kill -9 "$(cat w1.pid)"; log "SIGKILL worker w1 at $pos"; sleep 2; worker w1; killed_worker=1
  fi
  if [ -z "$killed_coord" ] && [ "$pos" -ge $((N/2)) ]; then
    kill -9 "$(cat coord.pid)"; log "SIGKILL coordinator at $pos"; sleep 5; coord; killed_coord=1
  fi
  sleep 30
done
"$BIN" status "$JOB" --coordinator $ADDR --json > status.json
"$BIN" status "$JOB" --coordinator $ADDR | tee -a run.log
for f in text bulletformat pgn; do
  rm -f out.$f out.$f.pull
  "$BIN" datagen pull "$JOB" --coordinator $ADDR --format $f --out out.$f 2>>pull.log | tee -a run.log
done
kill "$(cat w1.pid)" "$(cat w2.pid)" "$(cat coord.pid)" 2>/dev/null
(cd "$ROOT" && go run ./scripts/datagencheck -n "$N" -text "$D/out.text" -bullet "$D/out.bulletformat" -pgn "$D/out.pgn") 2>&1 | tee -a run.log
