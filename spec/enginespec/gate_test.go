package enginespec

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/verify"
)

// perft-gate= turns the movegen gate on for a match's engine, survives
// String, MatchEngine and the wire; every misuse is refused naming it.
func TestPerftGate(t *testing.T) {
	for _, in := range []string{"name=dev,cmd=./dev,perft-gate=1", "name=dev,cmd=./dev,perft-gate=uci", "name=dev,cmd=./dev,perft-gate=true"} {
		s, err := Parse(in, Match)
		if err != nil || s.MovegenGate != verify.GateProtoUCI {
			t.Fatalf("%s: %+v, %v", in, s, err)
		}
		back, err := Parse(s.String(), Match)
		if err != nil || back.MovegenGate != verify.GateProtoUCI {
			t.Fatalf("%s: String %q parses to %+v, %v", in, s.String(), back, err)
		}
		e, err := s.MatchEngine(Spec{})
		if err != nil || e.MovegenGate != verify.GateProtoUCI {
			t.Fatalf("%s: MatchEngine %+v, %v", in, e, err)
		}
		if p := s.ToProto(); p.GetMovegenGate() != verify.GateProtoUCI || FromProto(p).MovegenGate != verify.GateProtoUCI {
			t.Fatalf("%s: wire %v", in, p)
		}
	}
	if s, err := Parse("name=dev,cmd=./dev,perft-gate=0", LocalMatch); err != nil || s.MovegenGate != "" {
		t.Fatalf("perft-gate=0: %+v, %v", s, err)
	}
	for _, c := range []struct {
		use  Use
		in   string
		want string
	}{
		{Match, "name=dev,cmd=./dev,perft-gate=2", `perft-gate="2": want 1`},
		{Match, "name=dev,cmd=./dev,perft-gate=1,perft-gate=1", "perft-gate= given twice"},
		{Match, "name=dev,builtin,perft-gate=1", "the builtin engine's is Arbiter's own"},
		{LocalMatch, "cmd=./dev,proto=xboard,perft-gate=1", "proto=xboard has none"},
		{Each, "perft-gate=1", "perft-gate= is for an engine of a match or test"},
		{Verify, "cmd=./dev,perft-gate=1", "perft-gate= is for an engine of a match or test"},
	} {
		_, err := Parse(c.in, c.use)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.in, err, c.want)
		}
	}
}
