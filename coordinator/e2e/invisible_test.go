//go:build unix

package e2e

import (
	"testing"

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
	jobs, data := clientJobs(t)
	good := cleanMatchSpec()
	good.EngineA.Name, good.EngineB.Name, good.Notes = "שחמט-a", "شطرنج-b", "line one\nline two"
	checkRefusedThenClean(t, jobs, data, good, []refusedEdit{
		{"engine name", "engine_b name", "a right-to-left override (U+202E)", func(s *arbiterv1.MatchSpec) { s.EngineB.Name = "evil\u202Etxt.exe" }},
		{"option name", "engine_a option name", "a zero-width space (U+200B)", func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Hash\u200B"] = "1" }},
		{"option value", `engine_a option "Threads" value`, "U+2066", func(s *arbiterv1.MatchSpec) { s.EngineA.Options["Threads"] = "1\u2066" }},
		{"event", "event", "U+200F", func(s *arbiterv1.MatchSpec) { s.Event = "nightly\u200F" }},
		{"argument", "engine_a args[0]", "a byte order mark (U+FEFF)", func(s *arbiterv1.MatchSpec) { s.EngineA.Args = []string{"\uFEFF--x"} }},
		{"notes", "notes", "U+2060", func(s *arbiterv1.MatchSpec) { s.Notes = "see\u2060 here" }},
	})
}
