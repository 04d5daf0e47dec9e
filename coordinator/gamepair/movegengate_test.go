package gamepair

import (
	"strings"
	"testing"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A test's movegen gate is refused at submit when no worker could run
// it: an unknown protocol, the embedded engine, an xboard engine.
func TestCheckEngineGate(t *testing.T) {
	for _, c := range []struct {
		e    *arbiterv1.EngineSpec
		want string
	}{
		{&arbiterv1.EngineSpec{Name: "dev", Command: "dev", MovegenGate: "uci"}, ""},
		{&arbiterv1.EngineSpec{Name: "dev", Command: "dev", MovegenGate: "perftree"}, `movegen gate "perftree": want "uci"`},
		{&arbiterv1.EngineSpec{Name: "dev", Command: "embedded", MovegenGate: "uci"}, "the builtin engine's generator is Arbiter's own"},
		{&arbiterv1.EngineSpec{Name: "dev", Command: "dev", Protocol: "xboard", MovegenGate: "uci"}, "an xboard engine has no go perft"},
	} {
		err := CheckEngine("engine_a", c.e)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.e, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: %v, want an error with %q", c.e, err, c.want)
		}
	}
}
