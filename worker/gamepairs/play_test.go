package gamepairs

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/gamelabel"
	"github.com/arbiter-chess/arbiter/worker"
)

var pgnResult = regexp.MustCompile(`\[Result "([^"]+)"\]`)

// A batch result carries one outcome per game, in PGN order, that says what
// the PGN says; the builtin engine comes from the worker's factory only.
func TestPlayBatchOutcomes(t *testing.T) {
	b := &arbiterv1.GamePairBatch{
		TestId:      "t1",
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Options: map[string]string{"Hash": "1"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded", Options: map[string]string{"Hash": "1", "RFPMargin": "40"}},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 300}},
		Openings: []*arbiterv1.Opening{
			{Index: 0, MovesUci: []string{"e2e4", "e7e5"}},
			{Index: 1, Fen: "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"},
			{Index: 2, Fen: "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"},
		},
		Adjudication: &arbiterv1.Adjudication{MaxMoves: 40},
	}
	res, err := PlayBatch(context.Background(), b, builtin.New)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetGames()) != 6 || len(res.GetPgns()) != 6 {
		t.Fatalf("%d outcomes, %d PGNs; want 6 of each", len(res.GetGames()), len(res.GetPgns()))
	}
	want := map[string]string{"1-0": gamelabel.White, "0-1": gamelabel.Black, "1/2-1/2": gamelabel.Draw}
	terms := map[string]int{}
	for i, o := range res.GetGames() {
		m := pgnResult.FindStringSubmatch(res.GetPgns()[i])
		r, term := gamelabel.Labels(o)
		if int(o.GetGameIndex()) != i || m == nil || want[m[1]] != r || o.GetReason() == "" {
			t.Errorf("game %d: outcome %v, PGN result %v", i, o, m)
		}
		if o.GetTermination() == arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED {
			t.Errorf("game %d: no termination", i)
		}
		terms[term]++
	}
	// From the last opening White mates at once (Qg7#) in the pair's first
	// game... and in the second too: colours swap engines, not the position.
	t.Logf("terminations: %v", terms)
	if terms[gamelabel.Checkmate] < 2 {
		t.Errorf("terminations %v: want the two mates in one", terms)
	}
	if _, err := PlayBatch(context.Background(), b, nil); err == nil {
		t.Error("a builtin batch played without a factory")
	}
	// Without pgn_params no game records parameters.
	for i, p := range res.GetPgns() {
		if regexp.MustCompile(`Params "`).MatchString(p) {
			t.Errorf("game %d records parameters without pgn_params:\n%s", i, p)
		}
	}
}

// With pgn_params (an SPSA batch) every game records the values of those
// options each side played with, as WhiteParams and BlackParams, whichever
// side has White.
func TestPlayBatchRecordsParams(t *testing.T) {
	b := &arbiterv1.GamePairBatch{
		TestId:      "t1",
		EngineA:     &arbiterv1.EngineSpec{Name: "dev+", Command: "embedded", Options: map[string]string{"Hash": "1", "RFPMargin": "80", "FutMargin": "95"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "dev-", Command: "embedded", Options: map[string]string{"Hash": "1", "RFPMargin": "70", "FutMargin": "85"}},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 300}},
		Openings:    []*arbiterv1.Opening{{Index: 0, MovesUci: []string{"e2e4", "e7e5"}}},
		PgnParams:   []string{"FutMargin", "rfpmargin"},
	}
	res, err := PlayBatch(context.Background(), b, builtin.New)
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{"dev+": "FutMargin=95,RFPMargin=80", "dev-": "FutMargin=85,RFPMargin=70"}
	white := regexp.MustCompile(`\[White "([^"]+)"\]`)
	black := regexp.MustCompile(`\[Black "([^"]+)"\]`)
	if len(res.GetPgns()) != 2 {
		t.Fatalf("%d games, want 2", len(res.GetPgns()))
	}
	for i, p := range res.GetPgns() {
		w, bl := white.FindStringSubmatch(p), black.FindStringSubmatch(p)
		if w == nil || bl == nil {
			t.Fatalf("game %d has no White or Black tag:\n%s", i, p)
		}
		for _, want := range []string{`[WhiteParams "` + tags[w[1]] + `"]`, `[BlackParams "` + tags[bl[1]] + `"]`} {
			if !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(p) {
				t.Errorf("game %d (%s vs %s) lacks %s:\n%s", i, w[1], bl[1], want, p)
			}
		}
	}
}

// An engine's own time control replaces the batch's for it (node odds
// here); with both engines timed the batch needs none; an own time control
// that cannot be read is a refusal naming the engine. The worker says it
// plays them.
func TestPlayBatchPerEngineLimits(t *testing.T) {
	nodes := func(n uint64) *arbiterv1.TimeControl {
		return &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: n}}
	}
	b := &arbiterv1.GamePairBatch{
		TestId:       "t1",
		EngineA:      &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Options: map[string]string{"Hash": "1"}},
		EngineB:      &arbiterv1.EngineSpec{Name: "b", Command: "embedded", Options: map[string]string{"Hash": "1"}, TimeControl: nodes(600)},
		TimeControl:  nodes(300),
		Openings:     []*arbiterv1.Opening{{Index: 0, MovesUci: []string{"e2e4", "e7e5"}}},
		Adjudication: &arbiterv1.Adjudication{MaxMoves: 20},
	}
	want := map[string]string{"a": "nodes=300", "b": "nodes=600"}
	check := func(res *arbiterv1.GamePairBatchResult) {
		t.Helper()
		white := regexp.MustCompile(`\[White "([^"]+)"\]\n\[Black "([^"]+)"\]`)
		for i, p := range res.GetPgns() {
			m := white.FindStringSubmatch(p)
			if m == nil || !strings.Contains(p, `[WhiteTimeControl "`+want[m[1]]+`"]`) || !strings.Contains(p, `[BlackTimeControl "`+want[m[2]]+`"]`) {
				t.Errorf("game %d: want White %s, Black %s:\n%s", i, want[m[1]], want[m[2]], p)
			}
		}
	}
	res, err := PlayBatch(context.Background(), b, builtin.New)
	if err != nil {
		t.Fatal(err)
	}
	check(res)

	b.TimeControl, b.EngineA.TimeControl = nil, nodes(400)
	want["a"] = "nodes=400"
	if res, err = PlayBatch(context.Background(), b, builtin.New); err != nil {
		t.Fatal(err)
	}
	check(res)

	b.EngineB.TimeControl = &arbiterv1.TimeControl{}
	if _, err := PlayBatch(context.Background(), b, builtin.New); !worker.IsRefusal(err) || !strings.Contains(err.Error(), `engine "b": time control`) {
		t.Errorf("an unreadable own time control: %v", err)
	}
	if caps := newRunner(worker.Settings{}).Capabilities(); !slices.Contains(caps, "engine-limits") {
		t.Errorf("capabilities %v", caps)
	}
}

// TestPlayBatchRefusesWithoutTables: a batch adjudicated by tables of 4
// pieces is refused by a worker without tables, naming what it needs.
func TestPlayBatchRefusesWithoutTables(t *testing.T) {
	b := &arbiterv1.GamePairBatch{
		Openings:     []*arbiterv1.Opening{{Fen: "8/8/8/2K5/5p2/n6k/8/1R6 b - - 0 1"}},
		Adjudication: &arbiterv1.Adjudication{Tablebase: &arbiterv1.TablebaseAdjudication{Pieces: 4}},
	}
	_, err := PlayBatch(context.Background(), b, builtin.New)
	if !worker.IsRefusal(err) || !strings.Contains(err.Error(), "Syzygy tables of 4 pieces") {
		t.Fatalf("got %v, want a refusal naming the tables", err)
	}
}

// gamesOf counts the games that reached an end and the restarts that
// crashes and hangs imply, for the worker's metrics.
func TestGamesOf(t *testing.T) {
	games, restarts := gamesOf(&arbiterv1.GamePairBatchResult{
		Pgns: []string{"[Result \"1-0\"]\n\n1-0\n", "[Result \"*\"]\n\n*\n", "[Result \"1/2-1/2\"]\n\n1/2-1/2\n"},
		Incidents: []*arbiterv1.Incident{{Kind: arbiterv1.IncidentKind_INCIDENT_KIND_CRASH},
			{Kind: arbiterv1.IncidentKind_INCIDENT_KIND_TIME_LOSS}, {Kind: arbiterv1.IncidentKind_INCIDENT_KIND_HANG}},
	})
	if games != 2 || restarts != 2 {
		t.Errorf("games %d (want 2 finished), restarts %d (want 2: crash and hang)", games, restarts)
	}
}
