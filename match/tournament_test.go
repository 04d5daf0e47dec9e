package match_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/match/builtin"
)

// roundTags returns the PGN's Round tags and the White-Black of each.
func roundTags(t *testing.T, pgn []byte) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`\[Round "([^"]+)"\]\n\[White "([^"]+)"\]\n\[Black "([^"]+)"\]`)
	tags := map[string]string{}
	for _, m := range re.FindAllSubmatch(pgn, -1) {
		r := string(m[1])
		if _, dup := tags[r]; dup {
			t.Errorf("game %s is in the PGN twice", r)
		}
		tags[r] = string(m[2]) + "-" + string(m[3])
	}
	return tags
}

// sfNameless is Stockfish at a skill level, named by the tournament after
// its `id name`.
func sfNameless(skill int) match.EngineConfig {
	e := sf("", skill)
	return e
}

// threeEngines: Stockfish at two skill levels and the builtin engine, at
// node limits (the builtin's own, so that games stay short).
func threeEngines() []match.EngineConfig {
	return []match.EngineConfig{
		sfNameless(10),
		sfNameless(0),
		{Proto: "builtin", Options: []match.Option{{Name: "Hash", Value: "4"}}, Limits: match.Limits{Nodes: 3000}},
	}
}

func runTournament(t *testing.T, tr *match.Tournament) *match.Standings {
	t.Helper()
	st, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != match.StatusComplete {
		t.Fatalf("status %s (%s)", st.Status, st.Failure)
	}
	return st
}

func TestRoundRobinThreeEngines(t *testing.T) {
	need(t, stockfish, "stockfish")
	s, err := match.NewSchedule(3, match.RoundRobin, 0, 2, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := book(t, "8moves-200.pgn", match.BookOptions{Order: "random", Seed: 11})
	pgnFile := filepath.Join(t.TempDir(), "rr.pgn")
	units := 0
	st := runTournament(t, &match.Tournament{
		Engines: threeEngines(), Schedule: s, Limits: match.Limits{Nodes: 2000},
		Openings: b.At, Concurrency: 2, PGNFile: pgnFile, Builtin: builtin.New,
		Game:   match.GameConfig{Adjudication: match.Adjudication{MaxMoves: 100}},
		OnUnit: func(*match.UnitResult, *match.Standings) bool { units++; return false },
	})
	if st.Games != 12 || units != 6 {
		t.Fatalf("%d games in %d units, want 12 in 6", st.Games, units)
	}
	// Names: the two Stockfish are told apart, the builtin engine is named
	// as it names itself.
	if !strings.HasPrefix(st.Engines[0], "Stockfish") || st.Engines[1] != st.Engines[0]+" (2)" || st.Engines[2] != "Arbiter" {
		t.Errorf("engine names %q", st.Engines)
	}
	for _, p := range st.Pairings {
		if p.Wins+p.Draws+p.Losses != 4 || p.Penta.Pairs() != 2 {
			t.Errorf("pairing %d-%d: %+v", p.A, p.B, p)
		}
	}
	pgn, _ := os.ReadFile(pgnFile)
	checkPGN(t, pgn, 12)
	tags := roundTags(t, pgn)
	if len(tags) != 12 {
		t.Errorf("%d distinct Round tags, want 12", len(tags))
	}
	tab := st.Ratings()
	if len(tab.Rows) != 3 || tab.Anchor != "" {
		t.Fatalf("table %+v", tab)
	}
	sum := 0.0
	for _, r := range tab.Rows {
		if r.Games != 8 || math.IsNaN(r.Elo) || !(r.Error > 0) && !tab.Prior {
			t.Errorf("row %+v", r)
		}
		sum += r.Elo
	}
	if math.Abs(sum) > 1e-6 {
		t.Errorf("round-robin ratings sum to %v, want 0 (mean anchor)", sum)
	}
	t.Logf("\n%s", tab)
}

func TestGauntletThreeEngines(t *testing.T) {
	need(t, stockfish, "stockfish")
	s, err := match.NewSchedule(3, match.Gauntlet, 0, 2, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := book(t, "uho-200.epd", match.BookOptions{Order: "random", Seed: 5})
	pgnFile := filepath.Join(t.TempDir(), "g.pgn")
	engines := threeEngines()
	engines[0].Name = "seed"
	st := runTournament(t, &match.Tournament{
		Engines: engines, Schedule: s, Limits: match.Limits{Nodes: 2000},
		Openings: b.At, Concurrency: 2, PGNFile: pgnFile, Builtin: builtin.New,
		Game: match.GameConfig{Adjudication: match.Adjudication{MaxMoves: 100}},
	})
	if st.Games != 8 || len(st.Pairings) != 2 {
		t.Fatalf("%d games, %d pairings", st.Games, len(st.Pairings))
	}
	pgn, _ := os.ReadFile(pgnFile)
	checkPGN(t, pgn, 8)
	for r, players := range roundTags(t, pgn) {
		if !strings.Contains(players, "seed") {
			t.Errorf("game %s: %s, without the seed", r, players)
		}
	}
	tab := st.Ratings()
	if tab.Anchor != "seed" {
		t.Errorf("anchor %q", tab.Anchor)
	}
	for _, r := range tab.Rows {
		if r.Name == "seed" && r.Elo != 0 || r.Games == 0 {
			t.Errorf("row %+v", r)
		}
	}
	t.Logf("\n%s", tab)
}

// quick is a tournament of badengines (pseudo-random legal moves at once).
func quick(rounds int) (*match.Tournament, error) {
	s, err := match.NewSchedule(3, match.RoundRobin, 0, rounds, 2, 2)
	if err != nil {
		return nil, err
	}
	var engines []match.EngineConfig
	for _, n := range []string{"x", "y", "z"} {
		engines = append(engines, match.EngineConfig{Name: n, Cmd: badEngine})
	}
	return &match.Tournament{
		Engines: engines, Schedule: s, Limits: match.Limits{Nodes: 1}, Concurrency: 2,
		Openings: func(i int) match.Opening { return match.Opening{ID: i} },
		Game:     match.GameConfig{Adjudication: match.Adjudication{MaxMoves: 20}},
	}, nil
}

// TestResumeExactly: a tournament stopped mid-game (the context ends while
// the other slot plays) and resumed from its state file plays exactly the
// missing games: together the same games as an uninterrupted run, none
// twice, and the PGN holds each once.
func TestResumeExactly(t *testing.T) {
	dir := t.TempDir()
	full, err := quick(3)
	if err != nil {
		t.Fatal(err)
	}
	full.PGNFile = filepath.Join(dir, "full.pgn")
	whole := runTournament(t, full)
	fullPGN, _ := os.ReadFile(full.PGNFile)
	want := roundTags(t, fullPGN)

	part, _ := quick(3)
	part.PGNFile = filepath.Join(dir, "part.pgn")
	part.StateFile = filepath.Join(dir, "state.json")
	part.StateInterval = time.Hour // only the final state: what Ctrl-C leaves
	part.StateConfig = json.RawMessage(`{"note": "kept verbatim"}`)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	part.OnUnit = func(*match.UnitResult, *match.Standings) bool {
		if n++; n == 3 {
			cancel()
		}
		return false
	}
	st, err := part.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A unit that ends just as the context does is counted too.
	done := st.Games
	if st.Status != match.StatusInterrupted || done < 6 || done >= whole.Games {
		t.Fatalf("interrupted run: status %s, %d games", st.Status, done)
	}
	state, err := match.LoadState(part.StateFile)
	if err != nil {
		t.Fatal(err)
	}
	var config bytes.Buffer
	json.Compact(&config, state.Config)
	if state.Status != match.StatusInterrupted || state.GamesDone != done || config.String() != `{"note":"kept verbatim"}` ||
		len(state.Results)-strings.Count(state.Results, ".") != done {
		t.Fatalf("state %+v", state)
	}

	again, _ := quick(3)
	again.PGNFile, again.StateFile, again.Resume = part.PGNFile, part.StateFile, state
	played := 0
	again.OnUnit = func(u *match.UnitResult, _ *match.Standings) bool { played += len(u.Games); return false }
	st = runTournament(t, again)
	if st.Games != whole.Games || played != whole.Games-done {
		t.Fatalf("resumed: %d games (%d played now), uninterrupted %d", st.Games, played, whole.Games)
	}
	pgn, _ := os.ReadFile(part.PGNFile)
	checkPGN(t, pgn, whole.Games)
	got := roundTags(t, pgn)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("resumed games %v\nuninterrupted %v", got, want)
	}
	var gotSum, wantSum [3]int64
	for i, p := range st.Pairings {
		gotSum[i] = p.Wins + p.Draws + p.Losses
		wantSum[i] = whole.Pairings[i].Wins + whole.Pairings[i].Draws + whole.Pairings[i].Losses
	}
	if gotSum != wantSum {
		t.Errorf("games per pairing %v, want %v", gotSum, wantSum)
	}
	final, err := match.LoadState(part.StateFile)
	if err != nil || final.Status != match.StatusComplete || strings.Contains(final.Results, ".") {
		t.Fatalf("final state %+v %v", final, err)
	}

	// A PGN cut short since the state was written cannot be resumed from;
	// a different schedule is refused too.
	os.WriteFile(part.PGNFile, pgn[:10], 0o644)
	bad, _ := quick(3)
	bad.PGNFile, bad.Resume = part.PGNFile, state
	if _, err := bad.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "shorter") {
		t.Errorf("resume with a cut PGN: %v", err)
	}
	other, _ := quick(4)
	other.Resume = state
	other.PGNFile = part.PGNFile
	if _, err := other.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "resume") {
		t.Errorf("resume with another schedule: %v", err)
	}
}

// TestRecover: without recovery a crash stops the tournament after the
// game it happened in; with it the engine is restarted (an incident) and
// the games go on, until more than a few of them (here every one) ended
// abandoned: then the tournament stops failed, naming the engine.
func TestRecover(t *testing.T) {
	mk := func(recover bool) *match.Tournament {
		s, _ := match.NewSchedule(2, match.RoundRobin, 0, 3, 2, 2)
		return &match.Tournament{
			Engines: []match.EngineConfig{
				{Name: "bad", Cmd: badEngine, Options: []match.Option{{Name: "Mode", Value: "crash"}, {Name: "FailAt", Value: "3"}}},
				{Name: "good", Cmd: badEngine},
			},
			Schedule: s, Limits: match.Limits{Nodes: 1}, Recover: recover,
			Game: match.GameConfig{Adjudication: match.Adjudication{MaxMoves: 20}},
		}
	}
	st, err := mk(false).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != match.StatusFailed || st.Games != 1 || !strings.Contains(st.Failure, "crash") {
		t.Fatalf("without recovery: status %s, %d games, failure %q", st.Status, st.Games, st.Failure)
	}
	st, err = mk(true).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Games != 4 || st.Crashes != 4 || st.Restarts != 3 || st.Abandoned != 4 || st.Status != match.StatusFailed ||
		!strings.Contains(st.Failure, "4 of 4 games abandoned") || !strings.Contains(st.Failure, `engine "bad"`) {
		t.Fatalf("with recovery: status %s (%s), %d games, %d crashes, %d restarts: %v", st.Status, st.Failure, st.Games, st.Crashes, st.Restarts, st.Incidents)
	}
}

// TestEngineNamesAndHints: a nameless engine is named after itself; a
// UCI/xboard mix-up is explained.
func TestEngineNamesAndHints(t *testing.T) {
	need(t, stockfish, "stockfish")
	fm := need(t, "/usr/games/fairymax", "fairymax")
	s, _ := match.NewSchedule(2, match.RoundRobin, 0, 1, 2, 2)
	run := func(e match.EngineConfig) error {
		// Long enough for a loaded machine to let the engine print its
		// banner: the hint quotes it.
		e.StartTimeout = 4 * time.Second
		tr := &match.Tournament{Engines: []match.EngineConfig{e, {Name: "bad", Cmd: badEngine}}, Schedule: s, Limits: match.Limits{Nodes: 1}}
		_, err := tr.Run(context.Background())
		return err
	}
	if err := run(match.EngineConfig{Cmd: fm}); err == nil || !strings.Contains(err.Error(), "proto=xboard") || !strings.Contains(err.Error(), "Fairy-Max") {
		t.Errorf("fairymax as UCI: %v", err)
	}
	if err := run(match.EngineConfig{Cmd: stockfish, Proto: "xboard"}); err == nil || !strings.Contains(err.Error(), "proto=uci") {
		t.Errorf("stockfish as xboard: %v", err)
	}
	// Two engines of one name given are refused before anything starts.
	tr := &match.Tournament{Engines: []match.EngineConfig{{Name: "a", Cmd: badEngine}, {Name: "a", Cmd: badEngine}}, Schedule: s, Limits: match.Limits{Nodes: 1}}
	if _, err := tr.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "both named") {
		t.Errorf("duplicate names: %v", err)
	}
}

// TestMoveTimeSeconds: st=0.5 is half a second per move, as in fastchess
// and cutechess-cli.
func TestMoveTimeSeconds(t *testing.T) {
	need(t, stockfish, "stockfish")
	var l match.Limits
	if _, err := l.ParseLimit("st", "0.5"); err != nil || l.MoveTime != 500*time.Millisecond {
		t.Fatalf("st=0.5: %+v %v", l, err)
	}
	var pgn bytes.Buffer
	tot, err := match.Run(context.Background(), match.MatchConfig{
		Engines: [2]match.EngineConfig{sf("a", 5), sf("b", 5)}, Limits: l, Pairs: 1, PGN: &pgn,
		Openings: func(int) match.Opening { return match.Opening{} },
		// The margin is wide: on a loaded machine an engine is late now
		// and then; what is checked is the time it was given.
		Game: match.GameConfig{TimeMargin: 5 * time.Second, Adjudication: match.Adjudication{MaxMoves: 3}},
		OnPair: func(p *match.PairResult, _ *match.Totals) bool {
			var times []time.Duration
			for _, g := range p.Games {
				for _, inf := range g.Info[g.BookPlies:] {
					times = append(times, inf.Elapsed)
				}
			}
			sort.Slice(times, func(i, k int) bool { return times[i] < times[k] })
			if len(times) < 6 || times[len(times)/4] < 490*time.Millisecond || times[len(times)/2] > 700*time.Millisecond {
				t.Errorf("move times at st=0.5: %v", times)
			}
			return false
		},
	})
	if err != nil || tot.Games != 2 {
		t.Fatalf("%+v %v", tot, err)
	}
}

func TestLimitForms(t *testing.T) {
	for _, c := range []struct {
		kv   [][2]string
		want match.Limits
		bad  string // Validate's error, if any
	}{
		{[][2]string{{"tc", "40/60+0.6"}}, match.Limits{MovesToGo: 40, Base: time.Minute, Inc: 600 * time.Millisecond}, ""},
		{[][2]string{{"tc", "10+0.1"}}, match.Limits{Base: 10 * time.Second, Inc: 100 * time.Millisecond}, ""},
		{[][2]string{{"tc", "inf"}, {"depth", "8"}}, match.Limits{Depth: 8}, ""},
		{[][2]string{{"tc", "10+0.1"}, {"tc", "inf"}, {"nodes", "5"}}, match.Limits{Nodes: 5}, ""},
		{[][2]string{{"tc", "inf"}}, match.Limits{}, "tc=inf needs"},
		{[][2]string{{"st", "1.25"}}, match.Limits{MoveTime: 1250 * time.Millisecond}, ""},
		{[][2]string{{"movetime", "30"}}, match.Limits{MoveTime: 30 * time.Millisecond}, ""},
	} {
		var l match.Limits
		for _, kv := range c.kv {
			if _, err := l.ParseLimit(kv[0], kv[1]); err != nil {
				t.Fatalf("%v: %v", c.kv, err)
			}
		}
		err := l.Validate()
		if l != c.want || (c.bad == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.bad) {
			t.Errorf("%v: %+v, %v", c.kv, l, err)
		}
	}
	for _, kv := range [][2]string{{"st", "0"}, {"st", "0.0001"}, {"st", "NaN"}, {"st", "x"}, {"tc", "NaN"}, {"tc", "inf+1"}} {
		var l match.Limits
		if _, err := l.ParseLimit(kv[0], kv[1]); err == nil {
			t.Errorf("%s=%s accepted: %+v", kv[0], kv[1], l)
		}
	}
}
