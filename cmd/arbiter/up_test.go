package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `arbiter up` with three engines plays a round robin on its local
// workers as `submit match --wait` does: one test per pairing, each with
// its engines' own limits, rated together at the end; every game is in the
// PGN.
func TestUpTournamentThreeEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("plays games on a local cluster")
	}
	pgn := filepath.Join(t.TempDir(), "up.pgn")
	up := []string{"up", "--temp", "--workers", "2", "--threads", "1", "--hash", "1",
		"--engine", "name=a,builtin", "--engine", "name=b,builtin,nodes=1500", "--engine", "name=c,builtin,nodes=500",
		"--each", "nodes=1000", "--openings", "file=../../books/uho-200.epd,order=random,seed=3"}
	out, stderr, err := runArbiter(t, "", append(up, "--rounds", "1", "--games", "2", "--maxmoves", "80", "--pgnout", pgn)...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	for _, want := range []string{
		"Tournament: roundrobin of 3 engines, 1 rounds of 2 games per pairing, 2 per opening; nodes=1000 vs nodes=1500 vs nodes=500; tests ",
		"Rank Name", "Elo relative to the average"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		if !strings.Contains(out, " "+name+" ") {
			t.Errorf("no rating of %s in:\n%s", name, out)
		}
	}
	for _, want := range []string{": a vs b, nodes=1000 vs nodes=1500, 2 games", ": a vs c, nodes=1000 vs nodes=500, 2 games",
		": b vs c, nodes=1500 vs nodes=500, 2 games", "wrote 6 games to " + pgn} {
		if !strings.Contains(stderr, want) {
			t.Errorf("want %q in stderr:\n%s", want, stderr)
		}
	}
	b, err := os.ReadFile(pgn)
	if err != nil {
		t.Fatal(err)
	}
	// The Round tags are the tournament's, as a local one numbers them
	// (each pairing's test numbers its own games from 1.1).
	var tags []string
	for _, m := range regexp.MustCompile(`\[Round "([^"]*)"\]`).FindAllStringSubmatch(string(b), -1) {
		tags = append(tags, m[1])
	}
	if got := strings.Join(tags, " "); got != "1.1 1.2 1.3 1.4 1.5 1.6" {
		t.Errorf("Round tags %q, want 1.1 to 1.6", got)
	}
	games := regexp.MustCompile(`\[White "([^"]*)"\]\n\[Black "([^"]*)"\]`).FindAllStringSubmatch(string(b), -1)
	pairings := map[string]int{}
	for _, g := range games {
		pairings[g[1]+" - "+g[2]]++
	}
	if len(games) != 6 || strings.Count(string(b), "[Event ") != 6 || pairings["a - b"]+pairings["b - a"] != 2 || pairings["a - c"]+pairings["c - a"] != 2 || pairings["b - c"]+pairings["c - b"] != 2 {
		t.Errorf("games by pairing %v", pairings)
	}

	// What `submit match` refuses of a tournament, up refuses too.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--games", "2"}, "--rounds: required"},
		{[]string{"--rounds", "1", "--games", "2", "--json"}, "--json: not available for a tournament"},
		{[]string{"--rounds", "1", "--games", "2", "--repeat", "1"}, "--repeat: the cluster plays game pairs"},
		{[]string{"--sprt", "elo0=0,elo1=5"}, "a test is between exactly two engines"},
	} {
		_, _, err := runArbiter(t, "", append(up, c.args...)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}
}

// `arbiter up`'s user is its workers' operator: the installed engines of
// its command line play, file options included (here Stockfish writes
// its debug log where the user said), as given.
func TestUpAllowsTheEnginesOfItsCommandLine(t *testing.T) {
	const sf = "/usr/games/stockfish"
	if _, err := os.Stat(sf); err != nil || testing.Short() {
		t.Skip("no " + sf + " or -short")
	}
	log := filepath.Join(t.TempDir(), "sf.log")
	out, stderr, err := runArbiter(t, "", "up", "--temp", "--workers", "1", "--threads", "1", "--hash", "1",
		"--engine", "name=sf,cmd="+sf+",option.Hash=8,option.Debug Log File="+log, "--engine", "name=b,builtin",
		"--each", "nodes=500", "--openings", "file=../../books/uho-200.epd,order=random,seed=3", "--games", "2")
	if err != nil || !strings.Contains(out, "State:      done") {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), "bestmove") {
		t.Fatalf("the allowed Debug Log File was not written: %v", err)
	}
}

// A worker's operator gives the allowed engines; bad entries are refused
// before it connects.
func TestWorkerEngineAllowFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "allow")
	os.WriteFile(file, []byte("/bin/true\nnot an entry\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine-allow", "name=a b,cmd=/bin/true"}, "want a word"},
		{[]string{"--engine-allow", "name=x"}, "no program"},
		{[]string{"--engine-allow", "/bin/true", "--engine-allow", "/bin/true"}, "given twice"},
		{[]string{"--engine-allow-file", file}, "line 2"},
		{[]string{"--allow-uploads"}, "--allow-uploads needs --data"},
	} {
		args := append([]string{"worker", "--coordinator", "127.0.0.1:1", "--token", "x"}, c.args...)
		_, _, err := runArbiter(t, "", args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
}

// --bench-nps stands in for the workers' start-up bench: the clock is
// scaled by the test's reference nps over it (the PGN's TimeControl and
// the worker table say by how much), and with the two equal it is not
// scaled at all. Out of range, it is refused naming the flag, by up and
// by worker.
func TestUpBenchNPSScalesTheClock(t *testing.T) {
	if testing.Short() {
		t.Skip("plays games on a local cluster")
	}
	for _, c := range []struct {
		benchNPS, tc, row string
	}{
		{"1000000", "1+0.01", "1000000  1.00"},
		{"500000", "2+0.02", "500000  2.00"},
	} {
		pgn := filepath.Join(t.TempDir(), "up.pgn")
		out, stderr, err := runArbiter(t, "", "up", "--temp", "--workers", "1", "--threads", "1", "--hash", "1",
			"--bench-nps", c.benchNPS, "--engine", "name=a,builtin", "--engine", "name=b,builtin",
			"--each", "tc=1+0.01", "--reference-nps", "1000000", "--maxmoves", "40",
			"--openings", "file=../../books/uho-200.epd,order=random,seed=3", "--games", "2", "--pgnout", pgn)
		if err != nil || !strings.Contains(out, "State:      done") {
			t.Fatalf("--bench-nps %s: %v\n%s\n%s", c.benchNPS, err, out, stderr)
		}
		if !strings.Contains(out, c.row) {
			t.Errorf("--bench-nps %s: no worker row with %q in:\n%s", c.benchNPS, c.row, out)
		}
		b, err := os.ReadFile(pgn)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `[TimeControl "`+c.tc+`"]`); n != 2 {
			t.Errorf("--bench-nps %s: %d games at TimeControl %q, want 2:\n%s", c.benchNPS, n, c.tc, b)
		}
	}
	for _, args := range [][]string{
		{"up", "--temp", "--bench-nps", "2000000000000", "--depth", "1"},
		{"worker", "--coordinator", "127.0.0.1:1", "--token", "x", "--bench-nps", "2000000000000"},
	} {
		_, _, err := runArbiter(t, "", args...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "--bench-nps 2000000000000: at most 1000000000000") {
			t.Errorf("%q: exit %d, %v; want 2 naming --bench-nps and its bound", args, exitCode(err), err)
		}
	}
}

// `arbiter up` killed (SIGKILL) in the middle of its test and run again
// with the same command line on its kept --data goes on with that test,
// its games kept, rather than starting a second one that would share the
// workers (a net given as a file, uploaded again, is the same net); a
// different command line starts its own test. Perft is resumed
// the same way.
func TestUpResumesAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("plays games on a local cluster")
	}
	data := filepath.Join(t.TempDir(), "up")
	test := func(nodes string) []string {
		return []string{"up", "--data", data, "--workers", "1", "--threads", "1", "--hash", "1",
			"--engine", "name=a,builtin,net=../../engine/nnue/nets/default.nnue", "--engine", "name=b,builtin", "--each", "nodes=" + nodes,
			"--openings", "file=../../books/uho-200.epd,order=random,seed=3", "--sprt", "elo0=0,elo1=5", "--maxmoves", "60"}
	}
	killAfterGames := func(p *arbiterProcess) (id string) {
		t.Helper()
		id, _, _ = strings.Cut(p.waitLine(t, "test "), ":")
		p.waitLine(t, "games ")
		p.cmd.Process.Kill()
		<-p.exited
		return id
	}
	first := killAfterGames(startArbiterProcess(t, nil, test("400")...))

	p := startArbiterProcess(t, nil, test("400")...)
	rest := p.waitLine(t, "test ")
	id, played, _ := strings.Cut(rest, ": resuming, ")
	if id != first || !strings.HasSuffix(played, " games played") || played == "0 games played" {
		t.Fatalf("second run: %q, want test %s resuming with its games", rest, first)
	}
	p.waitLine(t, "games ")
	p.cmd.Process.Kill()
	<-p.exited

	// Another limit is another test: submitted, not resumed.
	p = startArbiterProcess(t, nil, test("300")...)
	if rest := p.waitLine(t, "test "); strings.Contains(rest, "resuming") || strings.HasPrefix(rest, first+":") {
		t.Fatalf("a test of other limits: %q, want a new test", rest)
	}
	p.cmd.Process.Kill()
	<-p.exited

	perft := []string{"up", "--data", data, "--workers", "1", "--threads", "1", "--depth", "8"}
	p = startArbiterProcess(t, nil, perft...)
	job, _, _ := strings.Cut(p.waitLine(t, "arbiter up: job "), ":")
	p.cmd.Process.Kill()
	<-p.exited
	p = startArbiterProcess(t, nil, perft...)
	if rest := p.waitLine(t, "arbiter up: resuming "); !strings.HasPrefix(rest, job+":") {
		t.Fatalf("perft resumed %q, want job %s", rest, job)
	}
}
