package test

import (
	"math"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Every bad spec is refused with BAD_INPUT naming the input, in a short
// message, and nothing is stored.
func TestCreateRefusesBadSpecs(t *testing.T) {
	e := newEnv(t, Config{})
	refusals := map[string]func(*arbiterv1.MatchSpec){
		"engine_a missing":       func(s *arbiterv1.MatchSpec) { s.EngineA = nil },
		"engine_b: name missing": func(s *arbiterv1.MatchSpec) { s.EngineB.Name = gamepairtest.Huge },
		"Bogus":                  func(s *arbiterv1.MatchSpec) { s.EngineA.Options = map[string]string{"Bogus": "1"} },
		"out of range":           func(s *arbiterv1.MatchSpec) { s.EngineA.Options = map[string]string{"RFPMargin": "99999"} },
		"command missing":        func(s *arbiterv1.MatchSpec) { s.EngineB.Command = "" },
		"protocol":               func(s *arbiterv1.MatchSpec) { s.EngineB.Command, s.EngineB.Protocol = "/usr/bin/x", "telnet" },
		"option with an empty name": func(s *arbiterv1.MatchSpec) {
			s.EngineB.Command, s.EngineB.Options = "/usr/bin/x", map[string]string{" ": "1"}
		},
		"option": func(s *arbiterv1.MatchSpec) {
			s.EngineB.Command, s.EngineB.Options = "/usr/bin/x", map[string]string{"Path": gamepairtest.Huge}
		},
		"arguments":              func(s *arbiterv1.MatchSpec) { s.EngineB.Command, s.EngineB.Args = "/usr/bin/x", make([]string, 300) },
		"both engines are named": func(s *arbiterv1.MatchSpec) { s.EngineB.Name = "new" },
		"time control":           func(s *arbiterv1.MatchSpec) { s.TimeControl = nil },
		"cannot be played": func(s *arbiterv1.MatchSpec) {
			s.TimeControl.GetClock().Base, s.TimeControl.GetClock().Increment = durationpb.New(10*time.Millisecond), nil
		},
		"openings: none given": func(s *arbiterv1.MatchSpec) { s.Openings = nil },
		"more than 1,000,000": func(s *arbiterv1.MatchSpec) {
			s.Openings = make([]*arbiterv1.Opening, MaxOpenings+1)
			for i := range s.Openings {
				s.Openings[i] = s.Openings[0]
			}
		},
		"openings (test book): opening 2": func(s *arbiterv1.MatchSpec) { s.Openings[2].Fen = "not a fen" },
		"longer than 128 bytes":           func(s *arbiterv1.MatchSpec) { s.Openings[1].Fen = gamepairtest.Huge },
		"e2e5":                            func(s *arbiterv1.MatchSpec) { s.Openings[3].MovesUci = []string{"e2e5"} },
		"not a UCI move":                  func(s *arbiterv1.MatchSpec) { s.Openings[3].MovesUci = []string{gamepairtest.Huge} },
		"openings: unknown order":         func(s *arbiterv1.MatchSpec) { s.BookOrder = "shuffled" },
		"book name":                       func(s *arbiterv1.MatchSpec) { s.BookName = gamepairtest.Huge },
		"event":                           func(s *arbiterv1.MatchSpec) { s.Event = gamepairtest.Huge },
		"games: 3 is odd":                 func(s *arbiterv1.MatchSpec) { s.Games = 3 },
		"more than 100,000,000":           func(s *arbiterv1.MatchSpec) { s.Games = 200_000_000 },
		"give a number of games, SPRT bounds or a precision stop": func(s *arbiterv1.MatchSpec) { s.Games = 0 },
		"stop_precision_elo: -1 is not a width":                   func(s *arbiterv1.MatchSpec) { s.StopPrecisionElo = -1 },
		"stop_precision_elo: NaN":                                 func(s *arbiterv1.MatchSpec) { s.StopPrecisionElo = math.NaN() },
		"stop_precision_elo: 2000":                                func(s *arbiterv1.MatchSpec) { s.StopPrecisionElo = 2000 },
		"group_takes: 3 without a group":                          func(s *arbiterv1.MatchSpec) { s.GroupTakes = 3 },
		"group \"a b\": ' ' is not":                               func(s *arbiterv1.MatchSpec) { s.Group, s.GroupTakes = "a b", 2 },
		"group_takes: 0 is not in [1, 100]": func(s *arbiterv1.MatchSpec) {
			s.Group, s.Sprt = "idea", &arbiterv1.SprtParams{Elo0: 0, Elo1: 5}
		},
		"group_takes: 101 is not in [1, 100]": func(s *arbiterv1.MatchSpec) {
			s.Group, s.GroupTakes, s.Sprt = "idea", 101, &arbiterv1.SprtParams{Elo0: 0, Elo1: 5}
		},
		"a group of takes splits an SPRT's alpha": func(s *arbiterv1.MatchSpec) { s.Group, s.GroupTakes = "idea", 2 },
		"sprt:": func(s *arbiterv1.MatchSpec) { s.Sprt = &arbiterv1.SprtParams{Elo0: 5, Elo1: 0} },
		"sprt model": func(s *arbiterv1.MatchSpec) {
			s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 5, Model: gamepairtest.Huge}
		},
		"sprt: unknown":                func(s *arbiterv1.MatchSpec) { s.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 5, Model: "elo"} },
		"book order":                   func(s *arbiterv1.MatchSpec) { s.BookOrder = gamepairtest.Huge },
		"throughput":                   func(s *arbiterv1.MatchSpec) { s.Throughput = math.NaN() },
		"reference nps":                func(s *arbiterv1.MatchSpec) { s.ReferenceNps = 1e13 },
		"time margin":                  func(s *arbiterv1.MatchSpec) { s.TimeMargin = durationpb.New(-time.Second) },
		"hang timeout":                 func(s *arbiterv1.MatchSpec) { s.HangTimeout = durationpb.New(2 * time.Hour) },
		"batch pairs 257: at most 256": func(s *arbiterv1.MatchSpec) { s.BatchPairs = 257 },
	}
	gamepairtest.RefuseEach(e.Driver, Kind, e.St, func() *arbiterv1.MatchSpec { return matchSpec(100, 2, 4) }, refusals)
}

// Defaults are filled in on a copy of the spec: batch size from the time
// control, throughput 1, SPRT alpha and beta; a batch is never larger than
// the test.
func TestCreateDefaults(t *testing.T) {
	e := newEnv(t, Config{})
	in := matchSpec(0, 0, 4)
	in.TimeControl.GetClock().Base, in.TimeControl.GetClock().Increment = durationpb.New(time.Second), durationpb.New(10*time.Millisecond)
	in.Sprt = &arbiterv1.SprtParams{Elo0: 0, Elo1: 5}
	orig := proto.Clone(in)
	j := e.Job(e.create(in))
	if !proto.Equal(in, orig) {
		t.Fatal("Create changed the caller's spec")
	}
	s := j.GetMatch()
	// A game at 1+0.01 is about 2.56 s at the reference speed: 6 pairs
	// make the 30 s batch.
	if s.GetBatchPairs() != 6 || s.GetThroughput() != 1 || s.GetSprt().GetAlpha() != 0.05 || s.GetSprt().GetModel() != "normalized" ||
		s.GetOpeningsCount() != 4 || s.GetOpenings() != nil || j.GetKind() != KindSPRT || j.GetSubmitter() != "carol" {
		t.Fatalf("defaults: %v (kind %s)", s, j.GetKind())
	}
	small := matchSpec(4, 10, 4)
	if j := e.Job(e.create(small)); j.GetMatch().GetBatchPairs() != 2 || j.GetKind() != KindMatch || j.GetProgress().GetUnitsTotal() != 1 {
		t.Fatalf("a 4-game match in 10-pair batches: %v", j)
	}
}
