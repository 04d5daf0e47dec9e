package match_test

// Integration tests with real engine processes: Debian's stockfish,
// fairymax and phalanx, and testing/testengines/badengine (built in
// TestMain). A test whose Debian engine is missing is skipped with the
// package to install. Games are short: nodes=2000, few pairs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
)

var badEngine string // path of the built test engine

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arbiter-match-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	badEngine = filepath.Join(dir, "badengine")
	out, err := exec.Command("go", "build", "-o", badEngine, "github.com/arbiter-chess/arbiter/testing/testengines/badengine").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building badengine: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func need(t *testing.T, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not installed (apt-get install %s)", path, pkg)
	}
	return path
}

const stockfish = "/usr/games/stockfish"

func pgnExtract(t *testing.T) string {
	for _, p := range []string{"/usr/games/pgn-extract", "/usr/bin/pgn-extract"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("pgn-extract not installed (apt-get install pgn-extract)")
	return ""
}

// checkPGN runs pgn-extract on the games and fails on any complaint.
func checkPGN(t *testing.T, pgn []byte, games int) {
	t.Helper()
	px := pgnExtract(t)
	f := filepath.Join(t.TempDir(), "games.pgn")
	if err := os.WriteFile(f, pgn, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(px, "-s", "-r", f).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("pgn-extract -r: %v\n%s\n---\n%s", err, out, pgn)
	}
	kept := filepath.Join(t.TempDir(), "kept.pgn")
	if out, err := exec.Command(px, "-s", "-o", kept, f).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("pgn-extract: %v\n%s", err, out)
	}
	out, _ = os.ReadFile(kept)
	if n := bytes.Count(out, []byte("[Event ")); n != games {
		t.Fatalf("pgn-extract kept %d games, want %d\n%s", n, games, out)
	}
}

func book(t *testing.T, name string, o match.BookOptions) *match.Book {
	t.Helper()
	o.Path = filepath.Join("..", "books", name)
	b, err := match.LoadBook(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sf(name string, skill int) match.EngineConfig {
	return match.EngineConfig{Name: name, Cmd: stockfish, Options: []match.Option{{Name: "Skill Level", Value: fmt.Sprint(skill)}, {Name: "Threads", Value: "1"}, {Name: "Hash", Value: "8"}}}
}

func TestStockfishSkillMatch(t *testing.T) {
	need(t, stockfish, "stockfish")
	var pgn bytes.Buffer
	b := book(t, "8moves-200.pgn", match.BookOptions{Order: "random", Seed: 7})
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines:     [2]match.EngineConfig{sf("strong", 10), sf("weak", 0)},
		Limits:      match.Limits{Nodes: 2000},
		Openings:    b.At,
		Pairs:       3,
		Concurrency: 2,
		PGN:         &pgn,
		Game:        match.GameConfig{Adjudication: match.Adjudication{MaxMoves: 150}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := tot.Results.Pentanomial
	if tot.Games != 6 || p == nil || p.Pairs() != 3 {
		t.Fatalf("games %d, pentanomial %v", tot.Games, p)
	}
	if tot.Results.Wins <= tot.Results.Losses {
		t.Errorf("Skill 10 did not beat Skill 0: %+v", tot.Results)
	}
	if len(tot.Incidents) != 0 {
		t.Errorf("incidents: %v", tot.Incidents)
	}
	checkPGN(t, pgn.Bytes(), 6)
	if !bytes.Contains(pgn.Bytes(), []byte(`[TimeControl "-"]`)) || !bytes.Contains(pgn.Bytes(), []byte("{book}")) {
		t.Errorf("PGN lacks tags or book comments:\n%s", pgn.Bytes()[:500])
	}
}

func TestClockGames(t *testing.T) {
	need(t, stockfish, "stockfish")
	var pgn bytes.Buffer
	b := book(t, "uho-200.epd", match.BookOptions{})
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines:  [2]match.EngineConfig{sf("a", 3), sf("b", 3)},
		Limits:   match.Limits{Base: time.Second, Inc: 10 * time.Millisecond},
		Openings: b.At,
		Pairs:    1,
		PGN:      &pgn,
		Game: match.GameConfig{TimeMargin: 200 * time.Millisecond, Adjudication: match.Adjudication{
			ResignMoves: 3, ResignScore: 600, DrawMoveNumber: 20, DrawMoves: 4, DrawScore: 10, MaxMoves: 50}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tot.TimeLosses != 0 {
		t.Errorf("time losses at 1+0.01: %v", tot.Incidents)
	}
	checkPGN(t, pgn.Bytes(), 2)
	if !bytes.Contains(pgn.Bytes(), []byte(`[TimeControl "1+0.01"]`)) || !bytes.Contains(pgn.Bytes(), []byte(`[SetUp "1"]`)) {
		t.Errorf("PGN tags:\n%s", pgn.String())
	}
}

func TestMovesToGoAndMoveTime(t *testing.T) {
	need(t, stockfish, "stockfish")
	b := book(t, "uho-200.epd", match.BookOptions{Start: 5})
	a := sf("mtg", 2)
	a.Limits = match.Limits{Base: 500 * time.Millisecond, MovesToGo: 10}
	c := sf("mt", 2)
	c.Limits = match.Limits{MoveTime: 10 * time.Millisecond}
	// The margin is wide: this test is about the limits reaching the
	// engines, not about a loaded machine's scheduling (a CI run at load 12
	// saw Stockfish answer a 10 ms movetime 107 ms late).
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines: [2]match.EngineConfig{a, c}, Openings: b.At, Pairs: 1,
		Game: match.GameConfig{TimeMargin: time.Second, Adjudication: match.Adjudication{MaxMoves: 30}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tot.Games != 2 || tot.TimeLosses != 0 {
		t.Fatalf("games %d, incidents %v", tot.Games, tot.Incidents)
	}
}

func TestChess960(t *testing.T) {
	need(t, stockfish, "stockfish")
	var pgn bytes.Buffer
	b, err := match.LoadBook(match.BookOptions{Path: "testdata/frc4.epd"})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Openings[0].Chess960 {
		t.Fatalf("X-FEN book not detected as Chess960: %+v", b.Openings[0])
	}
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines:  [2]match.EngineConfig{sf("frc-a", 5), sf("frc-b", 1)},
		Limits:   match.Limits{Nodes: 2000},
		Openings: b.At, Pairs: 2, Concurrency: 2, PGN: &pgn,
		Game: match.GameConfig{Adjudication: match.Adjudication{MaxMoves: 120}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tot.Games != 4 || len(tot.Incidents) != 0 {
		t.Fatalf("games %d, incidents %v", tot.Games, tot.Incidents)
	}
	if !bytes.Contains(pgn.Bytes(), []byte(`[Variant "Chess960"]`)) {
		t.Errorf("no Variant tag")
	}
	checkPGN(t, pgn.Bytes(), 4)
}

// TestXboardEngines plays fairymax (no setboard: the PGN book's moves are
// replayed from the start) against phalanx (-b- -l-: no book, no learning).
func TestXboardEngines(t *testing.T) {
	fm := need(t, "/usr/games/fairymax", "fairymax")
	ph := need(t, "/usr/games/phalanx", "phalanx")
	var pgn bytes.Buffer
	b := book(t, "8moves-200.pgn", match.BookOptions{})
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines: [2]match.EngineConfig{
			{Name: "fairymax", Cmd: fm, Proto: "xboard", Limits: match.Limits{Depth: 3}},
			{Name: "phalanx", Cmd: ph, Args: []string{"-b-", "-l-"}, Proto: "xboard", Limits: match.Limits{Base: 2 * time.Second, Inc: 20 * time.Millisecond}},
		},
		Openings: b.At, Pairs: 1, PGN: &pgn,
		Game: match.GameConfig{TimeMargin: 100 * time.Millisecond, Adjudication: match.Adjudication{MaxMoves: 60}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tot.Games != 2 {
		t.Fatalf("games %d", tot.Games)
	}
	for _, inc := range tot.Incidents {
		if inc.Kind != match.IncOverrun {
			t.Errorf("incident: %v", inc)
		}
	}
	for r := range tot.Terminations {
		if strings.Contains(r, "illegal") || strings.Contains(r, "crash") || strings.Contains(r, "hang") {
			t.Errorf("termination %q", r)
		}
	}
	checkPGN(t, pgn.Bytes(), 2)
	t.Logf("terminations: %v", tot.Terminations)
}

// An xboard engine without setboard cannot start from a FEN: the match
// does not start, and says which engine lacks what (before issue 32 every
// game was lost "abandoned" and the match reported an Elo).
func TestXboardNoSetboardRefusesFEN(t *testing.T) {
	fm := need(t, "/usr/games/fairymax", "fairymax")
	need(t, stockfish, "stockfish")
	b := book(t, "uho-200.epd", match.BookOptions{})
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines:  [2]match.EngineConfig{{Name: "fairymax", Cmd: fm, Proto: "xboard"}, sf("sf", 0)},
		Limits:   match.Limits{Depth: 2},
		Openings: b.At, Pairs: 1,
	})
	if tot != nil || !errors.Is(err, match.ErrCannotPlay) || !strings.Contains(err.Error(), `engine "fairymax"`) || !strings.Contains(err.Error(), "no setboard") {
		t.Fatalf("totals %v, error %v", tot, err)
	}
}

// TestBadEngine: every misbehaviour loses the game for the bad engine, is
// recorded as its incident, and the match goes on (the engine is restarted
// for the next game when it died).
func TestBadEngine(t *testing.T) {
	cases := []struct {
		mode   string
		limits match.Limits
		kind   match.IncidentKind
		end    match.End // how the bad engine's games end
		ok     bool      // the game ends normally (no loss by the incident)
	}{
		{"crash", match.Limits{Nodes: 100}, match.IncCrash, match.EndCrash, false},
		{"hang", match.Limits{Nodes: 100}, match.IncHang, match.EndStall, false},
		{"stall", match.Limits{Base: 300 * time.Millisecond}, match.IncHang, match.EndTimeForfeit, false},
		{"nobestmove", match.Limits{Nodes: 100}, match.IncNoBestmove, match.EndIllegalMove, false},
		{"empty", match.Limits{Nodes: 100}, match.IncNoBestmove, match.EndIllegalMove, false},
		{"illegal", match.Limits{Nodes: 100}, match.IncIllegal, match.EndIllegalMove, false},
		{"slow", match.Limits{Base: 200 * time.Millisecond, Inc: 10 * time.Millisecond}, match.IncTimeLoss, match.EndTimeForfeit, false},
		{"slow", match.Limits{MoveTime: 50 * time.Millisecond}, match.IncTimeLoss, match.EndTimeForfeit, false},
		{"garbage", match.Limits{Nodes: 100}, "", match.EndNone, true},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			bad := match.EngineConfig{Name: "bad", Cmd: badEngine, StopGrace: 400 * time.Millisecond, Options: []match.Option{{Name: "Mode", Value: c.mode}, {Name: "FailAt", Value: "3"}, {Name: "SlowMs", Value: "300"}}}
			good := match.EngineConfig{Name: "good", Cmd: badEngine}
			b := book(t, "8moves-200.pgn", match.BookOptions{})
			var pgn bytes.Buffer
			ends := map[match.End]int{}
			tot, err := match.Run(context.Background(), match.MatchConfig{
				Engines: [2]match.EngineConfig{bad, good}, Limits: c.limits,
				Openings: b.At, Pairs: 2, PGN: &pgn,
				Game: match.GameConfig{HangTimeout: 300 * time.Millisecond, TimeMargin: 20 * time.Millisecond, Adjudication: match.Adjudication{MaxMoves: 30}},
				OnPair: func(p *match.PairResult, _ *match.Totals) bool {
					for _, g := range p.Games {
						ends[g.End]++
					}
					return false
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if tot.Games != 4 {
				t.Fatalf("games %d: the match did not go on", tot.Games)
			}
			if c.ok {
				if len(tot.Incidents) != 0 {
					t.Fatalf("incidents %v", tot.Incidents)
				}
				return
			}
			if tot.Results.Losses != 4 {
				t.Errorf("bad engine lost %d of 4 games: %+v %v", tot.Results.Losses, tot.Results, tot.Terminations)
			}
			n := 0
			for _, inc := range tot.Incidents {
				if inc.Kind == c.kind && inc.Player == "bad" {
					n++
				}
			}
			if n != 4 {
				t.Errorf("%d %s incidents, want 4: %v", n, c.kind, tot.Incidents)
			}
			if ends[c.end] != 4 {
				t.Errorf("games ended %v, want 4 by %s", ends, c.end)
			}
			checkPGN(t, pgn.Bytes(), 4)
		})
	}
}

func TestStartupErrors(t *testing.T) {
	cfg := func(e match.EngineConfig) match.MatchConfig {
		return match.MatchConfig{
			Engines: [2]match.EngineConfig{e, {Name: "good", Cmd: badEngine}},
			Limits:  match.Limits{Nodes: 10}, Pairs: 1,
			Openings: func(int) match.Opening { return match.Opening{} },
		}
	}
	for name, c := range map[string]struct {
		e    match.EngineConfig
		want string
	}{
		"missing binary": {match.EngineConfig{Name: "x", Cmd: "/nonexistent/engine"}, "/nonexistent/engine"},
		"unknown option": {match.EngineConfig{Name: "x", Cmd: badEngine, Options: []match.Option{{Name: "Hashh", Value: "1"}}}, `"Hashh"`},
		"spin range":     {match.EngineConfig{Name: "x", Cmd: badEngine, Options: []match.Option{{Name: "FailAt", Value: "5000"}}}, "out of range"},
		"combo value":    {match.EngineConfig{Name: "x", Cmd: badEngine, Options: []match.Option{{Name: "Mode", Value: "explode"}}}, "want one of"},
		"startup hang":   {match.EngineConfig{Name: "x", Cmd: badEngine, Args: []string{"-startup-hang"}, StartTimeout: 200 * time.Millisecond}, "no uciok"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := match.Run(context.Background(), cfg(c.e))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %s", err, c.want)
			}
		})
	}
}

// TestStopMidMatch: cancelling the context ends games in flight quickly and
// kills nothing that is not ours.
func TestStopMidMatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := book(t, "8moves-200.pgn", match.BookOptions{})
	n := 0
	start := time.Now()
	tot, err := match.Run(ctx, match.MatchConfig{
		Engines: [2]match.EngineConfig{{Name: "a", Cmd: badEngine}, {Name: "b", Cmd: badEngine}},
		Limits:  match.Limits{Nodes: 1}, Openings: b.At, Concurrency: 2,
		OnPair: func(*match.PairResult, *match.Totals) bool {
			if n++; n == 5 {
				cancel()
			}
			return false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tot.Pairs < 5 || time.Since(start) > 10*time.Second {
		t.Fatalf("pairs %d in %v", tot.Pairs, time.Since(start))
	}
}
