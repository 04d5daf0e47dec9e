// Command benchperft runs Arbiter's perft beside other perft programs on
// the six chessprogramming-wiki positions, one thread and no hash each,
// interleaved (every round runs every program on a position before the
// next round), and prints nodes per CPU-second and Arbiter's ratio to each.
// CPU time is measured per child process (user + system), so a busy machine
// slows every program alike rather than skewing the ratio; every count is
// checked against the known one and a wrong count fails the run.
//
// Stockfish ("go perft") always takes part; perft_cpu_2026 and ellxor/perft
// take part when their binaries are given (flags, or the environment
// variables PERFT_CPU_2026 and ELLXOR_PERFT that scripts/bench-perft.sh
// passes on):
//
//	go run ./scripts/benchperft -arbiter bin/arbiter -stockfish /usr/games/stockfish \
//	    -perft-cpu-2026 /path/perft_cpu -ellxor /path/perft
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

// cases are the six positions of the chessprogramming wiki's Perft Results
// page at the depths of issue 43's table.
var cases = []benchCase{
	{"start position", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 7, 3195901860},
	{"Kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 6, 8031647685},
	{"position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 8, 3009794393},
	{"position 4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 6, 706045033},
	{"position 5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 6, 3048196529},
	{"position 6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 6, 6923051137},
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

// program is one perft program of the comparison: how to run it on a
// position and read its count.
type program struct {
	name string
	bin  string
	run  func(bin, fen string, depth int) (run, error)
}

func main() {
	arbiter := flag.String("arbiter", "bin/arbiter", "arbiter binary")
	stockfish := flag.String("stockfish", "/usr/games/stockfish", "Stockfish binary (empty: left out, for quick runs while working)")
	perftCPU := flag.String("perft-cpu-2026", os.Getenv("PERFT_CPU_2026"), "perft_cpu_2026 binary (empty: left out)")
	ellxor := flag.String("ellxor", os.Getenv("ELLXOR_PERFT"), "ellxor/perft binary (empty: left out)")
	rounds := flag.Int("rounds", 2, "interleaved rounds per position (best of each program is kept)")
	only := flag.String("positions", "", "comma-separated position numbers 1-6 to run (empty: all)")
	hashDepth := flag.Int("hash-depth", 8, "depth of the --hash 256 single-thread start-position run (0 to skip)")
	readme := flag.String("readme", "", "also write the figures into this file's bench-perft block (make readme-figures)")
	flag.Parse()
	if *rounds < 1 || *rounds > 100 {
		fail(fmt.Errorf("-rounds %d: want 1 to 100", *rounds))
	}
	selected, err := selectCases(*only)
	check(err)

	progs := []program{{"Arbiter", *arbiter, runArbiter}}
	if *stockfish != "" {
		progs = append(progs, program{"Stockfish", *stockfish, runStockfish})
	}
	if *perftCPU != "" {
		progs = append(progs, program{"perft_cpu_2026", *perftCPU, runPerftCPU2026})
	}
	if *ellxor != "" {
		progs = append(progs, program{"ellxor/perft", *ellxor, runEllxor})
	}
	for _, p := range progs {
		if _, err := os.Stat(p.bin); err != nil {
			fail(fmt.Errorf("%s not found at %q: %v", p.name, p.bin, err))
		}
	}
	table := benchTable(progs, selected, *rounds)
	hashLine := ""
	if *hashDepth > 0 {
		hashLine = hashRun(*arbiter, *hashDepth)
	}
	if *readme != "" {
		body := table + "\n(" + readmeblock.Machine() + ", best of " + strconv.Itoa(*rounds) + " interleaved rounds.)\n" + hashLine
		check(readmeblock.ReplaceFile(*readme, "bench-perft", body))
	}
}

// selectCases returns the cases named by a list like "2,4" (all for "").
func selectCases(list string) ([]benchCase, error) {
	if list == "" {
		return cases, nil
	}
	var out []benchCase
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > len(cases) {
			return nil, fmt.Errorf("-positions %q: %q is not a position number 1 to %d", list, f, len(cases))
		}
		out = append(out, cases[n-1])
	}
	return out, nil
}

// benchTable runs every program on every case, interleaved, prints the
// table as it goes and returns it in Markdown.
func benchTable(progs []program, selected []benchCase, rounds int) string {
	var md strings.Builder
	md.WriteString("| position (depth) |")
	for _, p := range progs {
		fmt.Fprintf(&md, " %s |", p.name)
	}
	for _, p := range progs[1:] {
		fmt.Fprintf(&md, " Arbiter ÷ %s |", p.name)
	}
	md.WriteString("\n|---|" + strings.Repeat("---|", 2*len(progs)-1) + "\n")

	fmt.Printf("perft, one thread, no hash; million nodes per CPU-second (best of %d interleaved rounds)\n", rounds)
	fmt.Printf("%-20s", "position (depth)")
	for _, p := range progs {
		fmt.Printf(" %15s", p.name)
	}
	for _, p := range progs[1:] {
		fmt.Printf(" %12s", "÷ "+p.name)
	}
	fmt.Println()
	for _, c := range selected {
		best := make([]run, len(progs))
		for r := 0; r < rounds; r++ {
			for i, p := range progs {
				res, err := p.run(p.bin, c.fen, c.depth)
				check(err)
				if res.nodes != c.nodes {
					fail(fmt.Errorf("%s on %s depth %d: %d nodes, expected %d", p.name, c.name, c.depth, res.nodes, c.nodes))
				}
				if r == 0 || res.cpu < best[i].cpu {
					best[i] = res
				}
			}
		}
		label := fmt.Sprintf("%s (%d)", c.name, c.depth)
		fmt.Printf("%-20s", label)
		fmt.Fprintf(&md, "| %s |", label)
		for i := range progs {
			fmt.Printf(" %13.1f M", mnps(best[i]))
			fmt.Fprintf(&md, " %.1f M |", mnps(best[i]))
		}
		for i := range progs[1:] {
			ratio := mnps(best[0]) / mnps(best[i+1])
			fmt.Printf(" %11.2fx", ratio)
			fmt.Fprintf(&md, " %.2f |", ratio)
		}
		fmt.Println()
		md.WriteString("\n")
	}
	return md.String()
}

// hashRun times Arbiter's start position at depth with a 256 MB table on
// one thread and returns the README's sentence about it.
func hashRun(arbiter string, depth int) string {
	a, err := runArbiterHash(arbiter, cases[0].fen, depth, 256)
	check(err)
	fmt.Printf("\narbiter perft --threads 1 --hash 256, start position depth %d: %d nodes in %.2f s CPU (%.2f s wall), %.1f Mnps\n",
		depth, a.nodes, a.cpu.Seconds(), a.wall.Seconds(), mnps(a))
	if a.hash != nil {
		fmt.Printf("hash: %d probes, %d hits (hit rate %.1f%%), %d stores\n", a.hash.Probes, a.hash.Hits, 100*a.hash.HitRate, a.hash.Stores)
	}
	line := fmt.Sprintf("\nWith `--hash 256` on one thread, perft %d of the start position (%d nodes) took %.1f CPU-seconds in the same run", depth, a.nodes, a.cpu.Seconds())
	if a.hash != nil {
		line += fmt.Sprintf("; the table's hit rate was %.1f %% (%d probes)", 100*a.hash.HitRate, a.hash.Probes)
	}
	return line + ".\n"
}

func mnps(r run) float64 { return float64(r.nodes) / r.cpu.Seconds() / 1e6 }

func check(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchperft:", err)
	os.Exit(1)
}

func runArbiter(bin, fen string, depth int) (run, error) { return runArbiterHash(bin, fen, depth, 0) }

func runArbiterHash(bin, fen string, depth, hashMB int) (run, error) {
	cmd := exec.Command(bin, "perft", "--threads", "1", "--hash", strconv.Itoa(hashMB), "--fen", fen, "--depth", strconv.Itoa(depth), "--json")
	out, r, err := timed(cmd)
	if err != nil {
		return run{}, err
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
	r.nodes, r.hash = n, res.Hash
	return r, nil
}

// runPerftCPU2026 runs perft_cpu_2026 without its transposition tables
// (-nott) on one thread (its default).
func runPerftCPU2026(bin, fen string, depth int) (run, error) {
	out, r, err := timed(exec.Command(bin, fen, strconv.Itoa(depth), "-nott"))
	if err != nil {
		return run{}, err
	}
	// "Perft(07): 3195901860, time: ..." for the depth asked.
	prefix := fmt.Sprintf("Perft(%02d): ", depth)
	r.nodes, err = countAfter(out, prefix, ",")
	if err != nil {
		return run{}, fmt.Errorf("%s: %v", bin, err)
	}
	return r, nil
}

// runEllxor runs ellxor/perft, which starts one thread per online CPU:
// taskset pins it to one CPU so that it counts on one thread at a time.
func runEllxor(bin, fen string, depth int) (run, error) {
	cmd := exec.Command(bin, fen, strconv.Itoa(depth))
	if ts, err := exec.LookPath("taskset"); err == nil {
		cmd = exec.Command(ts, "-c", "0", bin, fen, strconv.Itoa(depth))
	}
	out, r, err := timed(cmd)
	if err != nil {
		return run{}, err
	}
	r.nodes, err = countAfter(out, "Result:", "\n")
	if err != nil {
		return run{}, fmt.Errorf("%s: %v", bin, err)
	}
	return r, nil
}

// timed runs cmd to its end and returns its output and CPU time.
func timed(cmd *exec.Cmd) ([]byte, run, error) {
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return nil, run{}, fmt.Errorf("%s: %v", cmd.Path, err)
	}
	return out, run{cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall: wall}, nil
}

// countAfter reads the number between prefix and the next end in out.
func countAfter(out []byte, prefix, end string) (uint64, error) {
	s := string(out)
	i := strings.LastIndex(s, prefix)
	if i < 0 {
		return 0, fmt.Errorf("no %q in output %.200q", prefix, s)
	}
	rest := s[i+len(prefix):]
	if j := strings.Index(rest, end); j >= 0 {
		rest = rest[:j]
	}
	n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("count after %q: %v", prefix, err)
	}
	return n, nil
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
