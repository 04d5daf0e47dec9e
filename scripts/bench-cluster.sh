#!/usr/bin/env bash
# bench-cluster: throughput of the cluster against local perft, same run,
# and the coordinator load test. Prints figures; asserts only that the
# counts agree.
#
# For each depth it runs, ROUNDS times in alternating order, one process
# with THREADS threads sharing one table (`arbiter perft`), `arbiter up`
# with THREADS one-thread workers sharing one in-process table, and the
# same with a table per worker (--shared-hash=false: as separate machines
# are). Efficiency = local / cluster, of wall time (the job's, from its
# JSON: what a user waits for, workers idling at the end of a job
# included) and of CPU time (the work done: hash losses, slices walked
# twice, the coordinator's own share; less sensitive to other load on the
# machine). A cluster's CPU time is the process's less that of starting
# and stopping one (`up --depth 1`, measured first: the workers' start-up
# bench). The load average is printed: on a loaded machine trust the CPU
# column more.
#
#   DEPTHS="7 8"   perft depths of the start position to compare
#   THREADS=2      local threads = cluster workers (one thread each)
#   HASH=256       hash MB of the local process, and in total of the
#                  cluster (split between its workers) unless WORKER_HASH
#   WORKER_HASH=N  MB per worker instead (e.g. WORKER_HASH=256: each worker
#                  has what the local process has, as separate machines would)
#   ROUNDS=1       repetitions (alternating the order of the three runs)
#   PERFT9=1       also time perft 9 (the three runs once each)
#   LOAD=1         run the 1,000-worker coordinator load test (default on)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${BIN:-bin/arbiter}
DEPTHS=${DEPTHS:-"7 8"}
THREADS=${THREADS:-2}
HASH=${HASH:-256}
ROUNDS=${ROUNDS:-1}
WORKER_HASH=${WORKER_HASH:-$((HASH / THREADS))}
LOAD=${LOAD:-1}
[ -x "$BIN" ] || $GO build -o "$BIN" ./cmd/arbiter
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# timed NAME CMD...: runs CMD with stdout to $tmp/NAME.json; prints
# "wall_s cpu_s" of the whole process (children included).
timed() {
  local name=$1
  shift
  python3 - "$tmp/$name.json" "$@" <<'PY'
import resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
with open(out, "w") as f:
    subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL, check=True)
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{time.monotonic() - t0:.2f} {ru.ru_utime + ru.ru_stime:.2f}")
PY
}
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$tmp/$1.json" "$2"; }
load() { cut -d' ' -f1 /proc/loadavg; }

run_one() { # run_one KIND DEPTH
  case $1 in
  local) timed local "$BIN" perft --depth "$2" --threads "$THREADS" --hash "$HASH" --json ;;
  shared) timed shared "$BIN" up --temp --workers "$THREADS" --threads 1 --hash "$WORKER_HASH" --verify 0 --depth "$2" --json ;;
  separate) timed separate "$BIN" up --temp --workers "$THREADS" --threads 1 --hash "$WORKER_HASH" --shared-hash=false --verify 0 --depth "$2" --json ;;
  esac
}

bench_depth() { # bench_depth DEPTH ROUND
  local d=$1 round=$2 order kind
  if [ $((round % 2)) = 1 ]; then order="local shared separate"; else order="separate shared local"; fi
  local l0 l1
  declare -A wall cpu
  l0=$(load)
  for kind in $order; do
    read -r "wall[$kind]" "cpu[$kind]" < <(run_one "$kind" "$d")
  done
  l1=$(load)
  local ln sn pn kind
  ln=$(field local nodes); sn=$(field shared nodes); pn=$(field separate nodes)
  for kind in local shared separate; do
    wall[$kind]=$(field "$kind" seconds)
  done
  cpu[shared]=$(python3 -c "print(max(${cpu[shared]} - $base_cpu, 0.01))")
  cpu[separate]=$(python3 -c "print(max(${cpu[separate]} - $base_cpu, 0.01))")
  if [ "$ln" != "$sn" ] || [ "$ln" != "$pn" ]; then
    echo "MISMATCH at depth $d: local $ln, shared $sn, separate $pn" >&2
    exit 1
  fi
  python3 - "$d" "$ln" "$l0" "$l1" "${wall[local]}" "${cpu[local]}" "${wall[shared]}" "${cpu[shared]}" "${wall[separate]}" "${cpu[separate]}" <<'PY'
import sys
d, n, l0, l1 = sys.argv[1:5]
lw, lc, sw, sc, pw, pc = map(float, sys.argv[5:11])
print(f"{d:<5} {n:>14} {lw:8.1f} {lc:8.1f} {sw:8.1f} {sc:8.1f} {lw/sw:5.2f} {lc/sc:5.2f} {pw:8.1f} {pc:8.1f} {lw/pw:5.2f} {lc/pc:5.2f}  {l0}->{l1}")
PY
}

echo "perft of the start position: local = arbiter perft --threads $THREADS --hash $HASH;"
echo "shared/separate = arbiter up, $THREADS workers x 1 thread, $WORKER_HASH MB each, one shared table / a table each"
echo "eff = local / cluster (wall: time waited; cpu: work done)"
read -r _ base_cpu < <(timed base "$BIN" up --temp --workers "$THREADS" --threads 1 --hash "$WORKER_HASH" --verify 0 --depth 1 --json)
echo "cluster start and stop: $base_cpu CPU-s (subtracted from the cluster's CPU time)"
printf '%-5s %14s %8s %8s %8s %8s %5s %5s %8s %8s %5s %5s  %s\n' depth nodes local_s local_cpu shared_s shr_cpu eff_w eff_c separ_s sep_cpu eff_w eff_c load
for d in $DEPTHS; do
  for round in $(seq 1 "$ROUNDS"); do
    bench_depth "$d" "$round"
  done
done
if [ "${PERFT9:-0}" = 1 ]; then
  bench_depth 9 1
fi

if [ "$LOAD" = 1 ]; then
  echo "coordinator load test (1,000 simulated workers on loopback):"
  ARBITER_LOADTEST=1 $GO test -count=1 -run TestLoad -v ./coordinator/loadtest/ | grep -E 'load:|^(ok|FAIL|---)'
fi
