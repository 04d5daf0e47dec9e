#!/usr/bin/env bash
# bench-cluster: throughput of the cluster against local perft, same run,
# and the coordinator load test. Prints figures; asserts nothing.
#
#   DEPTHS="7 8"   perft depths of the start position to compare
#   THREADS=2      local threads = cluster workers (one thread each)
#   HASH=256       total hash MB (the cluster splits it between workers)
#   PERFT9=1       also time perft 9 through arbiter up (~1 h on 2 cores)
#   LOAD=1         run the 1,000-worker coordinator load test (default on)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${BIN:-bin/arbiter}
DEPTHS=${DEPTHS:-"7 8"}
THREADS=${THREADS:-2}
HASH=${HASH:-256}
LOAD=${LOAD:-1}
[ -x "$BIN" ] || $GO build -o "$BIN" ./cmd/arbiter

seconds() { python3 -c 'import json,sys; print(json.load(sys.stdin)["seconds"])'; }
nodes() { python3 -c 'import json,sys; print(json.load(sys.stdin)["nodes"])'; }

# cluster_s: `arbiter up`, workers sharing one in-process hash table;
# separate_s: each worker with its own table, as on separate machines.
printf '%-6s %-16s %9s %10s %6s %11s %6s\n' depth nodes local_s cluster_s ratio separate_s ratio
for d in $DEPTHS; do
  local_json=$("$BIN" perft --depth "$d" --threads "$THREADS" --hash "$HASH" --json)
  cluster_json=$("$BIN" up --workers "$THREADS" --threads 1 --hash $((HASH / THREADS)) --verify 0 --depth "$d" --json 2>/dev/null)
  sep_json=$("$BIN" up --workers "$THREADS" --threads 1 --hash $((HASH / THREADS)) --shared-hash=false --verify 0 --depth "$d" --json 2>/dev/null)
  ln=$(echo "$local_json" | nodes); cn=$(echo "$cluster_json" | nodes); sn=$(echo "$sep_json" | nodes)
  if [ "$ln" != "$cn" ] || [ "$ln" != "$sn" ]; then echo "MISMATCH at depth $d: local $ln, cluster $cn, separate $sn" >&2; exit 1; fi
  ls=$(echo "$local_json" | seconds); cs=$(echo "$cluster_json" | seconds); ss=$(echo "$sep_json" | seconds)
  r1=$(python3 -c "print(f'{$ls/$cs:.2f}')"); r2=$(python3 -c "print(f'{$ls/$ss:.2f}')")
  printf '%-6s %-16s %9.2f %10.2f %6s %11.2f %6s\n' "$d" "$ln" "$ls" "$cs" "$r1" "$ss" "$r2"
done
echo "ratio = cluster throughput / local throughput (1.00 = no overhead)"

if [ "${PERFT9:-0}" = 1 ]; then
  echo "perft 9 through arbiter up ($THREADS workers):"
  "$BIN" up --workers "$THREADS" --threads 1 --hash $((HASH / THREADS)) --verify 0 --depth 9 --json 2>/dev/null
fi

if [ "$LOAD" = 1 ]; then
  echo "coordinator load test (1,000 simulated workers on loopback):"
  ARBITER_LOADTEST=1 $GO test -count=1 -run TestLoad -v ./coordinator/loadtest/ | grep -E 'load:|^(ok|FAIL|---)'
fi
