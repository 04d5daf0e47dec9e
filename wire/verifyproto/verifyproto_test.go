package verifyproto

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

func TestParseClientEngine(t *testing.T) {
	for _, c := range []struct {
		in, name string
		args     []string
		proto    string
	}{
		{"cmd=./brokenperft,args=-bug ep", "brokenperft", []string{"-bug", "ep"}, "uci"},
		{"name=sf", "sf", nil, "uci"},
		{"name=sf,option.Threads=1", "sf", nil, "uci"},
		{"/usr/games/stockfish", "stockfish", nil, "uci"},
		{"name=bp,args=-bug a,b,proto=perftree", "bp", []string{"-bug", "a,b"}, "perftree"},
		{"cmd=/x/perft.sh,proto=perftree", "perft", nil, "perftree"},
	} {
		name, spec, err := ParseClientEngine(c.in)
		if err != nil || name != c.name || strings.Join(spec.Args, "|") != strings.Join(c.args, "|") || spec.Proto != c.proto {
			t.Errorf("%q: %q %+v %v", c.in, name, spec, err)
		}
	}
	for _, bad := range []string{"", "name=a/b", "cmd=x,dir=/tmp", "cmd=x,bogus=1"} {
		if _, _, err := ParseClientEngine(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseLocalEngine(t *testing.T) {
	e, err := ParseLocalEngine("name=sh,cmd=sh,args=-c")
	if err != nil || e.Name != "sh" || !strings.HasPrefix(e.Spec.Cmd, "/") {
		t.Fatalf("%+v %v", e, err)
	}
	if _, err := ParseLocalEngine("cmd=/nonexistent/engine"); err == nil || !strings.Contains(err.Error(), "/nonexistent/engine") {
		t.Errorf("missing program: %v", err)
	}
	// The unit's arguments and options come after the worker's.
	e.Spec.Options = []verify.Option{{Name: "Hash", Value: "16"}}
	u := UnitProto("sh", verify.EngineSpec{Args: []string{"-x"}, Options: []verify.Option{{Name: "Threads", Value: "1"}}},
		verify.Query{FEN: engine.StartFEN, Moves: []string{"e2e4"}, Depth: 2}, time.Second)
	r := Resolve(e, u)
	if strings.Join(r.Engine.Args, " ") != "-c -x" || len(r.Engine.Options) != 2 || r.Engine.Options[1].Name != "Threads" ||
		r.Query.Depth != 2 || r.Query.Moves[0] != "e2e4" || r.Timeout != time.Second {
		t.Errorf("resolved %+v", r)
	}
	if Key(u) != Key(UnitProto("sh", verify.EngineSpec{Args: []string{"-x"}, Options: []verify.Option{{Name: "Threads", Value: "1"}}},
		verify.Query{FEN: engine.StartFEN, Moves: []string{"e2e4"}, Depth: 2}, time.Second)) {
		t.Error("the same unit has two keys")
	}
	if Key(u) == Key(UnitProto("sh", verify.EngineSpec{}, verify.Query{FEN: engine.StartFEN, Depth: 2}, time.Second)) {
		t.Error("different units share a key")
	}
}

func TestResultRoundTripAndChecks(t *testing.T) {
	big, _ := engine.ParseCount("99999999999999999999999")
	d := verify.Divide{Lines: []verify.DivideLine{{Move: "e2e4", Nodes: big}, {Move: "a7a8n", Nodes: engine.Count{Lo: 3}}}, Total: big}
	q := verify.Query{FEN: engine.StartFEN, Depth: 3}
	got, err := ResultFromProto(ResultProto(d, nil), "e", q)
	if err != nil || got.Total != big || len(got.Lines) != 2 || got.Lines[1].Move != "a7a8n" {
		t.Fatalf("%+v %v", got, err)
	}
	_, err = ResultFromProto(ResultProto(verify.Divide{}, &verify.EngineError{Kind: "timeout", Msg: "no total after 1s"}), "e", q)
	var ee *verify.EngineError
	if !errors.As(err, &ee) || ee.Kind != "timeout" || ee.Query == nil {
		t.Errorf("engine error: %v", err)
	}
	for _, bad := range []*arbiterv1.VerifyUnitResult{
		nil,
		{Total: "x"},
		{Total: "-1"},
		{Total: "1", Lines: []*arbiterv1.VerifyDivideLine{{Move: "e2e9", Nodes: "1"}}},
		{Total: "1", Lines: []*arbiterv1.VerifyDivideLine{{Move: "e2e4", Nodes: "1e3"}}},
		{Total: "1", EngineError: &arbiterv1.VerifyEngineError{Kind: "crash"}},
		{EngineError: &arbiterv1.VerifyEngineError{Kind: "oops"}},
		{Total: strings.Repeat("9", 40)},
	} {
		if CheckResult(bad) == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

func TestCheckUnit(t *testing.T) {
	ok := UnitProto("sf", verify.EngineSpec{}, verify.Query{FEN: engine.StartFEN, Moves: []string{"e2e4", "e7e5"}, Depth: 3}, time.Minute)
	if err := CheckUnit(ok); err != nil {
		t.Fatal(err)
	}
	for _, q := range []verify.Query{
		{FEN: "not a fen", Depth: 3},
		{FEN: engine.StartFEN, Depth: 0},
		{FEN: engine.StartFEN, Moves: []string{"e2e5"}, Depth: 2},
	} {
		if err := CheckUnit(UnitProto("sf", verify.EngineSpec{}, q, 0)); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
	if err := CheckUnit(UnitProto("sf", verify.EngineSpec{Options: []verify.Option{{Name: "Hash\nquit", Value: "1"}}},
		verify.Query{FEN: engine.StartFEN, Depth: 1}, 0)); err == nil {
		t.Error("option with a line break accepted")
	}
}
