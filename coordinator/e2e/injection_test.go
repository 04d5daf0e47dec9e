//go:build unix

package e2e

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestLineBreakInjectionRefused: a client that skips the CLI submits, over
// gRPC, a test whose engine option value carries "\nsetoption name X value
// Y" (a second UCI command), and the same trick in every other string that
// reaches an engine or a PGN tag. Each is refused INVALID_ARGUMENT naming
// the field, and nothing is stored. The control, the same spec without
// the line break, is accepted.
func TestLineBreakInjectionRefused(t *testing.T) {
	addr, data := freeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	jobs := arbiterv1.NewJobServiceClient(dial(t, addr, newCredential(t, addr, "client")))
	good := &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "/usr/games/stockfish", Options: map[string]string{"Threads": "1"}, Args: []string{"--x"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}},
		Games:       2, Event: "nightly",
	}
	const inject = "\nsetoption name Debug Log File value /tmp/owned"
	cases := []struct {
		what  string
		edit  func(*arbiterv1.MatchSpec)
		field string
	}{
		{"option value", func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Threads"] = "1" + inject }, `engine_a option "Threads" value`},
		{"option name", func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Threads"+inject] = "1" }, "engine_a option name"},
		{"engine name", func(s *arbiterv1.MatchSpec) { s.EngineB.Name = "b\n[Result \"1-0\"]" }, "engine_b name"},
		{"argument", func(s *arbiterv1.MatchSpec) { s.EngineA.Args = []string{"--x", "y\rz"} }, "engine_a args[1]"},
		{"event", func(s *arbiterv1.MatchSpec) { s.Event = "nightly\n[White \"me\"]" }, "event"},
		{"book name", func(s *arbiterv1.MatchSpec) { s.BookName = "book\x1b[2J" }, "book name"},
		{"command", func(s *arbiterv1.MatchSpec) { s.EngineA.Command = "/usr/games/stockfish\n" }, "engine_a command"},
	}
	for _, c := range cases {
		spec := proto.Clone(good).(*arbiterv1.MatchSpec)
		c.edit(spec)
		_, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: spec})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.field) ||
			!strings.Contains(status.Convert(err).Message(), "control characters") {
			t.Errorf("%s with a control character: %v, want InvalidArgument naming %q", c.what, err, c.field)
		}
	}
	// SPSA: an option-name injection through a tuned parameter's name.
	_, err := jobs.SubmitSpsa(ctxT(t, 10*time.Second), &arbiterv1.SubmitSpsaRequest{Spec: &arbiterv1.SpsaSpec{
		Engine:      &arbiterv1.EngineSpec{Name: "t", Command: "/usr/games/stockfish"},
		Params:      []*arbiterv1.SpsaParam{{Name: "Hash\vvalue 1", Start: 16, Min: 1, Max: 64, CEnd: 4, REnd: 0.002}},
		TimeControl: good.TimeControl, Openings: good.Openings, Pairs: 10, Event: "t",
	}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "control character") {
		t.Errorf("SPSA param name with a control character: %v, want InvalidArgument", err)
	}
	if n := storeTests(t, data); n != 0 {
		t.Fatalf("%d tests stored after the refusals, want none", n)
	}
	// Control: the same spec, clean, is accepted.
	if _, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: good}); err != nil {
		t.Fatalf("clean spec refused: %v", err)
	}
	if n := storeTests(t, data); n != 1 {
		t.Fatalf("%d tests stored after the clean submit, want 1", n)
	}
}
