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

// TestInvisibleCharactersRefused: a client submits, over gRPC to the real
// coordinator, a test whose engine name carries a right-to-left override
// ("evil\u202Etxt.exe" shows as "eviltxt.exe" reversed), an option name
// with a zero-width space (a second "Hash" that looks like the first), and
// the same in an option value, the event, an argument and the notes. Each
// is refused INVALID_ARGUMENT naming the field and the code point, the
// message never carries the raw character, and nothing is stored. The
// control, the same spec with letters of right-to-left scripts (which are
// not format characters), is accepted.
func TestInvisibleCharactersRefused(t *testing.T) {
	addr, data := freeAddr(t), t.TempDir()
	coordinator(t, addr, data)
	jobs := arbiterv1.NewJobServiceClient(dial(t, addr, newCredential(t, addr, "client")))
	good := &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "שחמט-a", Command: "/usr/games/stockfish", Options: map[string]string{"Threads": "1"}, Args: []string{"--x"}},
		EngineB:     &arbiterv1.EngineSpec{Name: "شطرنج-b", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
		Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}},
		Games:       2, Event: "nightly", Notes: "line one\nline two",
	}
	cases := []struct {
		what, field, codePoint string
		edit                   func(*arbiterv1.MatchSpec)
	}{
		{"engine name", "engine_b name", "U+202E", func(s *arbiterv1.MatchSpec) { s.EngineB.Name = "evil\u202Etxt.exe" }},
		{"option name", "engine_a option name", "U+200B", func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Hash\u200B"] = "1" }},
		{"option value", `engine_a option "Threads" value`, "U+2066", func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Threads"] = "1\u2066" }},
		{"event", "event", "U+200F", func(s *arbiterv1.MatchSpec) { s.Event = "nightly\u200F" }},
		{"argument", "engine_a args[0]", "U+FEFF", func(s *arbiterv1.MatchSpec) { s.EngineA.Args = []string{"\uFEFF--x"} }},
		{"notes", "notes", "U+2060", func(s *arbiterv1.MatchSpec) { s.Notes = "see\u2060 here" }},
	}
	for _, c := range cases {
		spec := proto.Clone(good).(*arbiterv1.MatchSpec)
		c.edit(spec)
		_, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: spec})
		msg := status.Convert(err).Message()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(msg, c.field) || !strings.Contains(msg, c.codePoint) {
			t.Errorf("%s with %s: %v, want InvalidArgument naming %q and %s", c.what, c.codePoint, err, c.field, c.codePoint)
		}
		if strings.ContainsAny(msg, "\u202E\u200B\u2066\u200F\uFEFF\u2060") {
			t.Errorf("%s: the message carries the raw character: %q", c.what, msg)
		}
	}
	if n := storeTests(t, data); n != 0 {
		t.Fatalf("%d tests stored after the refusals, want none", n)
	}
	if _, err := jobs.SubmitMatch(ctxT(t, 10*time.Second), &arbiterv1.SubmitMatchRequest{Spec: good}); err != nil {
		t.Fatalf("spec in Hebrew and Arabic letters refused: %v", err)
	}
	if n := storeTests(t, data); n != 1 {
		t.Fatalf("%d tests stored after the clean submit, want 1", n)
	}
}
