"""Runs Fishtest's worker code, unmodified, with a given fastchess.

Usage: driver.py WORKER_DIR FASTCHESS BOOK ENGINE GAMES CONCURRENCY SEED NODES_NEW NODES_BASE

WORKER_DIR is Fishtest's worker/ folder (official-stockfish/fishtest),
imported as it is. The driver calls its verify_fastchess with the commit
worker.py pins, then hands launch_fastchess (which runs fastchess and
parses its output with parse_fastchess_output) the command line run_games
builds for a test, with this machine's engine, book and a fixed node
count per engine so that the games are the same on every run. A small
HTTP server on loopback stands in for Fishtest's server: it answers
update_task (the results the worker posts) and worker_log. The last line
printed is "DRIVER_RESULT " and a JSON object: whether the worker kept
the binary, what launch_fastchess returned or raised, the stats it
posted last, the PGN CRC32 it read, and every update_task payload's
stats.
"""

import json
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

worker_dir, fastchess, book, engine = sys.argv[1:5]
games, concurrency, seed, nodes_new, nodes_base = (int(a) for a in sys.argv[5:10])
sys.path.insert(0, worker_dir)

import games as fishtest_games  # noqa: E402  (Fishtest's worker/games.py)
import worker as fishtest_worker  # noqa: E402  (Fishtest's worker/worker.py)

updates = []


class StubServer(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/api/update_task":
            updates.append(body["stats"])
            reply = {"task_alive": True, "duration": 0.0}
        elif self.path == "/api/worker_log":
            print("worker_log:", body.get("message"), flush=True)
            reply = {"duration": 0.0}
        else:
            reply = {"error": f"stub server: no {self.path}", "duration": 0.0}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), StubServer)
threading.Thread(target=server.serve_forever, daemon=True).start()
remote = f"http://127.0.0.1:{server.server_address[1]}"

kept = fishtest_worker.verify_fastchess(fastchess, fishtest_worker.FASTCHESS_SHA)

new_name, base_name = "New-e443b2459e0ab1c2", "Base-e443b2459e0ab1c2"
task_id, run_id = 7, "6650a1b2c3d4e5f6a7b8c9d0"
# run_games's command line (worker/games.py), for a test without SPSA,
# with adjudication, an EPD book and Threads given by the worker.
cmd = (
    [fastchess, "-testEnv", "-recover", "-repeat", "-games", "2", "-rounds", str(games // 2)]
    + ["-ratinginterval", "1", "-scoreinterval", "1", "-autosaveinterval", "0", "-report", "penta=true"]
    + ["-pgnout", "file=batch.pgn", "append=false"]
    + ["-crc32", "pgn=true"]
    + ["-site", f"{remote}/tests/view/{run_id}"]
    + ["-event", f"Batch {task_id}: e443b245 vs e443b245"]
    + ["-srand", str(seed)]
    + ["-resign", "movecount=3", "score=600", "-draw", "movenumber=34", "movecount=8", "score=20"]
    + ["-variant", "standard"]
    + ["-concurrency", str(concurrency)]
    + ["-openings", f"file={book}", "format=epd", "order=random", "plies=16", "start=1"]
    + ["-check-mate-pvs"]
    + ["-engine", "name=" + new_name, "tc=1000+10", f"nodes={nodes_new}", f"cmd={engine}", "dir=.", "option.Hash=16"]
    + ["_spsa_"]
    + ["-engine", "name=" + base_name, "tc=1000+10", f"nodes={nodes_base}", f"cmd={engine}", "dir=.", "option.Hash=16"]
    + ["_spsa_"]
    + ["-each", "proto=uci"]
    + ["option.Threads=1"]
)
result = {
    "stats": {"wins": 0, "losses": 0, "draws": 0, "crashes": 0, "time_losses": 0, "pentanomial": [0] * 5},
    "worker_info": {"unique_key": "driver"},
}
pgn_file = {}
current_state = {"task_id": task_id}
outcome = {"kept": kept}
try:
    outcome["alive"] = fishtest_games.launch_fastchess(
        cmd, new_name, base_name, current_state, {"unique_key": "driver"}, "password", remote,
        result, False, games, 2, 600, pgn_file, run_id, task_id,
    )
except Exception as e:
    outcome["raised"] = f"{type(e).__name__}: {e}"
    traceback.print_exc()
outcome["stats"] = result["stats"]
outcome["crc"] = pgn_file.get("CRC")
outcome["updates"] = updates
outcome["pgn_crc32"] = None
if Path("batch.pgn").exists():
    import zlib

    outcome["pgn_crc32"] = hex(zlib.crc32(Path("batch.pgn").read_bytes()))
server.shutdown()
print("DRIVER_RESULT " + json.dumps(outcome), flush=True)
