//go:build unix

package e2e

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/textcheck"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestLineBreakInjectionRefused: a client that skips the CLI submits, over
// gRPC, a test whose engine option value carries "\nsetoption name X value
// Y" (a second UCI command), and the same trick in every other string that
// reaches an engine or a PGN tag. Each is refused INVALID_ARGUMENT naming
// the field, and nothing is stored. The control, the same spec without
// the line break, is accepted.
func TestLineBreakInjectionRefused(t *testing.T) {
	jobs, data := clientJobs(t)
	good := cleanMatchSpec()
	const inject = "\nsetoption name Debug Log File value /tmp/owned"
	const control = "control characters"
	// SPSA: an option-name injection through a tuned parameter's name.
	_, err := jobs.SubmitSpsa(ctxT(t, 10*time.Second), &arbiterv1.SubmitSpsaRequest{Spec: &arbiterv1.SpsaSpec{
		Engine:      &arbiterv1.EngineSpec{Name: "t", Command: "/usr/games/stockfish"},
		Params:      []*arbiterv1.SpsaParam{{Name: "Hash\vvalue 1", Start: 16, Min: 1, Max: 64, CEnd: 4, REnd: 0.002}},
		TimeControl: good.TimeControl, Openings: good.Openings, Pairs: 10, Event: "t",
	}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "control character") {
		t.Errorf("SPSA param name with a control character: %v, want InvalidArgument", err)
	}
	checkRefusedThenClean(t, jobs, data, good, []refusedEdit{
		{"option value", `engine_a option "Threads" value`, control, func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Threads"] = "1" + inject }},
		{"option name", "engine_a option name", control, func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Threads"+inject] = "1" }},
		{"engine name", "engine_b name", control, func(s *arbiterv1.MatchSpec) { s.EngineB.Name = "b\n[Result \"1-0\"]" }},
		{"argument", "engine_a args[1]", control, func(s *arbiterv1.MatchSpec) { s.EngineA.Args = []string{"--x", "y\rz"} }},
		{"event", "event", control, func(s *arbiterv1.MatchSpec) { s.Event = "nightly\n[White \"me\"]" }},
		{"book name", "book name", control, func(s *arbiterv1.MatchSpec) { s.BookName = "book\x1b[2J" }},
		{"command", "engine_a command", control, func(s *arbiterv1.MatchSpec) { s.EngineA.Command = "/usr/games/stockfish\n" }},
	})
}

// clientJobs starts a coordinator and returns its job service as a client
// sees it, and its data directory.
func clientJobs(t *testing.T) (arbiterv1.JobServiceClient, string) {
	t.Helper()
	addr, data := proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	return arbiterv1.NewJobServiceClient(dial(t, addr, newCredential(t, addr, "client"))), data
}

// cleanMatchSpec is a test that passes every check at submit: the
// control of the injection tests, which each break one of its fields.
func cleanMatchSpec() *arbiterv1.MatchSpec {
	return &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "a", Command: "/usr/games/stockfish", Options: map[string]string{"Threads": "1"}, Args: []string{"--x"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}},
		Games:       2, Event: "nightly",
	}
}

// refusedEdit is one field of a clean spec broken, the field the refusal
// must name and a text it must hold.
type refusedEdit struct {
	what, field, want string
	edit              func(*arbiterv1.MatchSpec)
}

// checkRefusedThenClean submits good broken by each edit and wants each
// refused INVALID_ARGUMENT naming the field, holding want, and showing no
// control or invisible character raw; then nothing stored on data. The
// control: good itself is accepted and stored.
func checkRefusedThenClean(t *testing.T, jobs arbiterv1.JobServiceClient, data string, good *arbiterv1.MatchSpec, edits []refusedEdit) {
	t.Helper()
	for _, c := range edits {
		spec := proto.Clone(good).(*arbiterv1.MatchSpec)
		c.edit(spec)
		_, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: spec})
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(msg, c.field) || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %v, want InvalidArgument naming %q and %q", c.what, err, c.field, c.want)
		}
		if r, _, found := textcheck.FirstControl(msg); found {
			t.Errorf("%s: the message carries %U raw: %q", c.what, r, msg)
		}
	}
	if n := storeTests(t, data); n != 0 {
		t.Fatalf("%d tests stored after the refusals, want none", n)
	}
	if _, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: good}); err != nil {
		t.Fatalf("clean spec refused: %v", err)
	}
	if n := storeTests(t, data); n != 1 {
		t.Fatalf("%d tests stored after the clean submit, want 1", n)
	}
}
