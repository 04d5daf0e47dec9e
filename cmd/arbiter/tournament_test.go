package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/spec/matchplan"
)

// The three engines of the tournament tests: Stockfish at two
// skill levels and the embedded engine, all named by themselves.
func threeEngines() []string {
	return []string{
		"--engine", "cmd=" + matchSF + ",option.Skill Level=0,option.Hash=8",
		"--engine", "cmd=" + matchSF + ",option.Skill Level=10,option.Hash=8",
		"--engine", "builtin",
	}
}

// pgnRounds are the Round tags of a PGN file, in file order.
func pgnRounds(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var r []string
	for _, m := range regexp.MustCompile(`\[Round "([^"]*)"\]`).FindAllSubmatch(b, -1) {
		r = append(r, string(m[1]))
	}
	return r
}

// pgnGames maps each game's Round tag to its players and starting FEN.
func pgnGames(t *testing.T, file string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	games := map[string]string{}
	for _, g := range strings.Split(string(b), "[Event ")[1:] {
		tag := func(name string) string {
			m := regexp.MustCompile(`\[` + name + ` "([^"]*)"\]`).FindStringSubmatch(g)
			if m == nil {
				return ""
			}
			return m[1]
		}
		round := tag("Round")
		if _, dup := games[round]; dup {
			t.Errorf("%s: game %s twice", file, round)
		}
		games[round] = tag("White") + " - " + tag("Black") + " @ " + tag("FEN")
	}
	return games
}

// A round-robin of three engines: every pairing plays 2 games a round for
// 2 rounds (12 games), all in the PGN, which pgn-extract reads, and a
// rating table of the three.
func TestMatchRoundRobinThreeEngines(t *testing.T) {
	needSF(t)
	pgn := filepath.Join(t.TempDir(), "rr.pgn")
	out, err := runMatchCmd(t, append(threeEngines(), "--each", "nodes=1000", "--tournament", "roundrobin", "--rounds", "2", "--games", "2",
		"--concurrency", "2", "--maxmoves", "80", "--pgnout", pgn, "--openings", "file=../../books/uho-200.epd,order=random,seed=4", "--ratinginterval", "0")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"Tournament: roundrobin of 3 engines", "State: " + strings.TrimSuffix(pgn, ".pgn") + ".state.json",
		"Rank Name", "Stockfish 15.1 ", "Stockfish 15.1 (2) ", "Arbiter ", "Elo relative to the average", "Games: 12 in", "Finished match"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Finished game "); n != 12 {
		t.Errorf("%d games reported, want 12", n)
	}
	rounds := pgnRounds(t, pgn)
	sort.Strings(rounds)
	if want := "1.1 1.2 1.3 1.4 1.5 1.6 2.1 2.2 2.3 2.4 2.5 2.6"; strings.Join(rounds, " ") != want {
		t.Errorf("PGN rounds %v, want %s", rounds, want)
	}
	pgnExtractOK(t, pgn, 12)
	st, err := match.LoadState(strings.TrimSuffix(pgn, ".pgn") + ".state.json")
	if err != nil || st.Status != match.StatusComplete || st.GamesDone != 12 || strings.Contains(st.Results, ".") {
		t.Fatalf("state %+v, %v", st, err)
	}
}

// A gauntlet: the first engine against the two others, 2 rounds of 2
// games (8 games); --json gives the standings, the first engine the
// anchor, and the engines not seeded never meet.
func TestMatchGauntletThreeEnginesJSON(t *testing.T) {
	needSF(t)
	pgn := filepath.Join(t.TempDir(), "g.pgn")
	out, err := runMatchCmd(t, append(threeEngines(), "--each", "nodes=1000", "--tournament", "gauntlet", "--rounds", "2",
		"--concurrency", "2", "--maxmoves", "80", "--pgnout", pgn, "--json")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r matchplan.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if r.Status != "complete" || r.Games != 8 || r.Scheduled != 8 || len(r.Pairings) != 2 || len(r.Ratings) != 3 ||
		r.Anchor != "Stockfish 15.1" || r.Schedule.Type != "gauntlet" || r.Schedule.GauntletSeeds != 1 {
		t.Fatalf("result %+v", r)
	}
	for _, p := range r.Pairings {
		if p.A != "Stockfish 15.1" || p.Wins+p.Draws+p.Losses != 4 {
			t.Errorf("pairing %+v", p)
		}
		pairs := int64(0)
		for _, c := range p.Pentanomial {
			pairs += c
		}
		if pairs != 2 {
			t.Errorf("pairing %s-%s: %d game pairs in the pentanomial, want 2", p.A, p.B, pairs)
		}
	}
	for _, row := range r.Ratings {
		if row.Elo == nil || row.Games == 0 || (row.Name != r.Anchor && row.Error == nil) {
			t.Errorf("rating %+v", row)
		}
	}
	// Plain integers: no quoted numbers anywhere.
	if regexp.MustCompile(`": "-?[0-9]+"`).MatchString(out) {
		t.Errorf("quoted integers in\n%s", out)
	}
	pgnExtractOK(t, pgn, 8)
	for _, g := range pgnGames(t, pgn) {
		if !strings.Contains(g, "Stockfish 15.1 -") && !strings.Contains(g, "- Stockfish 15.1 @") {
			t.Errorf("a game without the seed: %s", g)
		}
	}
}

// A match interrupted with SIGINT in the middle of its games exits 1 with
// the state written; resumed, it plays exactly the missing games: the same
// games (players, colours, openings) as an uninterrupted match with the
// same seed, none twice.
func TestMatchSIGINTResume(t *testing.T) {
	needSF(t)
	dir := t.TempDir()
	args := func(pgn string) []string {
		return []string{"match", "--engine", "name=a,cmd=" + matchSF + ",option.Skill Level=3,option.Hash=8",
			"--engine", "name=b,cmd=" + matchSF + ",option.Skill Level=6,option.Hash=8", "--engine", "name=c,builtin",
			"--each", "nodes=3000", "--rounds", "3", "--games", "2", "--concurrency", "2", "--maxmoves", "60",
			"--openings", "file=../../books/uho-200.epd,order=random,seed=11", "--pgnout", pgn, "--quiet"}
	}
	whole := filepath.Join(dir, "whole.pgn")
	if out, err := runMatchCmd(t, args(whole)[1:]...); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	cut := filepath.Join(dir, "cut.pgn")
	state := filepath.Join(dir, "cut.state.json")
	p := startArbiterProcess(t, nil, args(cut)...)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if st, err := match.LoadState(state); err == nil && st.GamesDone >= 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no 4 games counted in 2 minutes")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Fatal("arbiter match did not stop on SIGINT")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.log(), "--resume "+state) {
		t.Fatalf("exit %d after SIGINT, want 1 and the resume command:\n%s", code, p.log())
	}
	st, err := match.LoadState(state)
	if err != nil || st.Status != match.StatusInterrupted || st.GamesDone >= 18 {
		t.Fatalf("state after SIGINT: %+v, %v", st, err)
	}
	before := len(pgnRounds(t, cut))
	if before != st.GamesDone {
		t.Fatalf("%d games in the PGN, %d in the state", before, st.GamesDone)
	}
	t.Logf("interrupted after %d games (PGN %d)", st.GamesDone, before)

	// --resume takes only session flags.
	if _, err := runMatchCmd(t, "--resume", state, "--rounds", "4"); carriedCode(err) != 2 || !strings.Contains(err.Error(), "--rounds") {
		t.Errorf("--resume with --rounds: %v", err)
	}
	out, err := runMatchCmd(t, "--resume", state, "--quiet")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Resuming after ") || !strings.Contains(out, "Games: 18 in") {
		t.Errorf("resumed output:\n%s", out)
	}
	a, b := pgnGames(t, whole), pgnGames(t, cut)
	if len(a) != 18 || len(b) != 18 {
		t.Fatalf("%d games uninterrupted, %d interrupted and resumed; want 18", len(a), len(b))
	}
	for round, g := range a {
		if b[round] != g {
			t.Errorf("game %s: %q uninterrupted, %q resumed", round, g, b[round])
		}
	}
	pgnExtractOK(t, cut, 18)
	if _, err := runMatchCmd(t, "--resume", state); carriedCode(err) != 2 || !strings.Contains(err.Error(), "complete") {
		t.Errorf("resuming a complete match: %v", err)
	}
}

// --config reads fastchess's field names; flags given too win.
func TestMatchConfigFile(t *testing.T) {
	needSF(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.json")
	os.WriteFile(cfg, []byte(`{
  "engines": [
    {"name": "sf", "cmd": "`+matchSF+`", "options": [["Hash", "8"], ["Skill Level", "2"]], "limit": {"nodes": 800}},
    {"name": "sf2", "cmd": "`+matchSF+`", "options": {"Hash": 8}, "limit": {"nodes": 800}},
    "name=emb,builtin,nodes=800"
  ],
  "type": "gauntlet", "rounds": 1, "games": 2, "concurrency": 2,
  "maxmoves": {"move_count": 60, "enabled": true},
  "pgn": {"file": "`+filepath.Join(dir, "c.pgn")+`"}
}`), 0o644)
	out, err := runMatchCmd(t, "--config", cfg, "--rounds", "2", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var r matchplan.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Games != 8 || r.Schedule.Type != "gauntlet" || r.Anchor != "sf" {
		t.Fatalf("%+v %v\n%s", r, err, out)
	}
	if n := len(pgnRounds(t, filepath.Join(dir, "c.pgn"))); n != 8 {
		t.Errorf("%d games in the config's PGN file", n)
	}
	os.WriteFile(cfg, []byte(`{"engines": ["builtin", "builtin"], "roundz": 3}`), 0o644)
	if _, err := runMatchCmd(t, "--config", cfg); carriedCode(err) != 2 || !strings.Contains(err.Error(), `"roundz"`) {
		t.Errorf("unknown field: %v", err)
	}
}

// Refusals of the tournament flags name the flag.
func TestMatchTournamentRefusals(t *testing.T) {
	e := []string{"--engine", "builtin", "--engine", "builtin", "--engine", "builtin", "--each", "nodes=100"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(e, "--games", "2"), "--rounds: required for a tournament"},
		{append(e, "--rounds", "1", "--tournament", "swiss"), `--tournament: "swiss"`},
		{append(e, "--rounds", "1", "--seeds", "1"), "--seeds: seeds are for --tournament gauntlet"},
		{append(e, "--rounds", "1", "--tournament", "gauntlet", "--seeds", "3"), "seeds 3"},
		{append(e, "--rounds", "1", "--games", "3", "--repeat", "2"), "multiple of repeat"},
		{append(e, "--sprt", "elo0=0,elo1=5"), "--sprt: an SPRT is between two engines"},
		{[]string{"--resume", "/no/such/state.json"}, "--resume"},
	} {
		_, err := runMatchCmd(t, c.args...)
		if carriedCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

// Two engines in fastchess's rounds of single games (no game pairs): the
// report has W/D/L without a pentanomial, and colours alternate.
func TestMatchSingleGames(t *testing.T) {
	out, err := runMatchCmd(t, "--engine", "name=a,builtin", "--engine", "name=b,builtin,option.UseNNUE=false,option.KnightValueMG=200", "--each", "nodes=200",
		"--rounds", "3", "--games", "1", "--maxmoves", "40", "--ratinginterval", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"Finished game 1.1 (a vs b)", "Finished game 2.1 (b vs a)", "Finished game 3.1 (a vs b)", "Results of a vs b (nodes=200, start position)", "Games: 3 in"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Ptnml") {
		t.Errorf("a pentanomial without game pairs:\n%s", out)
	}
}
