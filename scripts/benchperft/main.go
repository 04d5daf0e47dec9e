// Command benchperft runs Arbiter's perft and Stockfish's "go perft" on the
// same positions in one run, alternating, and prints nodes per CPU-second
// and the ratio. CPU time is measured per child process (user + system), so
// a busy machine slows both sides alike rather than skewing the ratio.
//
//	go run ./scripts/benchperft -arbiter bin/arbiter -stockfish /usr/games/stockfish
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/scripts/readmeblock"
)

type benchCase struct {
	name  string
	fen   string
	depth int
	nodes uint64
}

var cases = []benchCase{
	{"start position", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 7, 3195901860},
	{"Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 6, 8031647685},
}

type run struct {
	nodes uint64
	cpu   time.Duration
	wall  time.Duration
	hash  *hashUse // arbiter with --hash only
}

// hashUse is the "hash" object of arbiter perft --json.
type hashUse struct {
	Probes  uint64  `json:"probes"`
	Hits    uint64  `json:"hits"`
	Stores  uint64  `json:"stores"`
	HitRate float64 `json:"hit_rate"`
}

func main() {
	arbiter := flag.String("arbiter", "bin/arbiter", "arbiter binary")
	stockfish := flag.String("stockfish", "/usr/games/stockfish", "Stockfish binary")
	rounds := flag.Int("rounds", 2, "alternating rounds per position (best of each side is kept)")
	hashDepth := flag.Int("hash-depth", 8, "depth of the --hash 256 single-thread start-position run (0 to skip)")
	readme := flag.String("readme", "", "also write the figures into this file's bench-perft block (make readme-figures)")
	flag.Parse()
	var table strings.Builder
	table.WriteString("| position | depth | Arbiter | Stockfish | ratio |\n|---|---|---|---|---|\n")

	if _, err := os.Stat(*stockfish); err != nil {
		fmt.Fprintf(os.Stderr, "benchperft: Stockfish not found at %s (apt-get install stockfish): %v\n", *stockfish, err)
		os.Exit(2)
	}
	fmt.Println("perft, one thread, no hash; nodes per CPU-second (best of", *rounds, "alternating rounds)")
	fmt.Printf("%-16s %5s %14s %12s %12s %7s\n", "position", "depth", "nodes", "arbiter", "stockfish", "ratio")
	for _, c := range cases {
		var best [2]run
		for r := 0; r < *rounds; r++ {
			a, err := runArbiter(*arbiter, c.fen, c.depth, 0)
			check(err)
			s, err := runStockfish(*stockfish, c.fen, c.depth)
			check(err)
			if a.nodes != c.nodes || s.nodes != c.nodes {
				fmt.Fprintf(os.Stderr, "benchperft: %s depth %d: expected %d nodes, arbiter %d, stockfish %d\n", c.name, c.depth, c.nodes, a.nodes, s.nodes)
				os.Exit(1)
			}
			if r == 0 || a.cpu < best[0].cpu {
				best[0] = a
			}
			if r == 0 || s.cpu < best[1].cpu {
				best[1] = s
			}
		}
		an := mnps(best[0])
		sn := mnps(best[1])
		fmt.Printf("%-16s %5d %14d %9.1f M %9.1f M %6.2fx\n", c.name, c.depth, c.nodes, an, sn, an/sn)
		fmt.Fprintf(&table, "| %s | %d | %.1f M | %.1f M | %.2fx |\n", c.name, c.depth, an, sn, an/sn)
	}
	hashLine := ""
	if *hashDepth > 0 {
		a, err := runArbiter(*arbiter, cases[0].fen, *hashDepth, 256)
		check(err)
		fmt.Printf("\narbiter perft --threads 1 --hash 256, start position depth %d: %d nodes in %.2f s CPU (%.2f s wall), %.1f Mnps\n",
			*hashDepth, a.nodes, a.cpu.Seconds(), a.wall.Seconds(), mnps(a))
		if a.hash != nil {
			fmt.Printf("hash: %d probes, %d hits (hit rate %.1f%%), %d stores\n", a.hash.Probes, a.hash.Hits, 100*a.hash.HitRate, a.hash.Stores)
		}
		hashLine = fmt.Sprintf("\nWith `--hash 256` on one thread, perft %d of the start position (%d nodes) took %.1f CPU-seconds in the same run", *hashDepth, a.nodes, a.cpu.Seconds())
		if a.hash != nil {
			hashLine += fmt.Sprintf("; the table's hit rate was %.1f %% (%d probes)", 100*a.hash.HitRate, a.hash.Probes)
		}
		hashLine += ".\n"
	}
	if *readme != "" {
		body := table.String() + "\n(" + readmeblock.Machine() + ", best of " + strconv.Itoa(*rounds) + " alternating rounds.)\n" + hashLine
		check(readmeblock.ReplaceFile(*readme, "bench-perft", body))
	}
}

func mnps(r run) float64 { return float64(r.nodes) / r.cpu.Seconds() / 1e6 }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchperft:", err)
		os.Exit(1)
	}
}

func runArbiter(bin, fen string, depth, hashMB int) (run, error) {
	cmd := exec.Command(bin, "perft", "--threads", "1", "--hash", strconv.Itoa(hashMB), "--fen", fen, "--depth", strconv.Itoa(depth), "--json")
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return run{}, fmt.Errorf("%s: %v", bin, err)
	}
	var res struct {
		Nodes json.Number `json:"nodes"`
		Hash  *hashUse    `json:"hash"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return run{}, fmt.Errorf("%s: output %.100q: %v", bin, out, err)
	}
	n, err := strconv.ParseUint(res.Nodes.String(), 10, 64)
	if err != nil {
		return run{}, fmt.Errorf("%s: node count %.100q: %v", bin, res.Nodes, err)
	}
	return run{nodes: n, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall: wall, hash: res.Hash}, nil
}

func runStockfish(bin, fen string, depth int) (run, error) {
	cmd := exec.Command(bin)
	in, err := cmd.StdinPipe()
	if err != nil {
		return run{}, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return run{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return run{}, fmt.Errorf("%s: %v", bin, err)
	}
	fmt.Fprintf(in, "uci\nsetoption name Threads value 1\nposition fen %s\ngo perft %d\n", fen, depth)
	var nodes uint64
	sc := bufio.NewScanner(outPipe)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Nodes searched: "); ok {
			nodes, _ = strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			break
		}
	}
	io.WriteString(in, "quit\n")
	in.Close()
	go io.Copy(io.Discard, outPipe)
	if err := cmd.Wait(); err != nil {
		return run{}, fmt.Errorf("%s: %v", bin, err)
	}
	wall := time.Since(start)
	return run{nodes: nodes, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall: wall}, nil
}
