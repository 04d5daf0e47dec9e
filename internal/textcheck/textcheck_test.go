package textcheck

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "Stockfish 17", "Hash", "C:/engines/x y", "Élo ± 5", "κ"} {
		if err := Check("f", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for in, want := range map[string]string{
		"1\nsetoption name X value Y": "a line feed (U+000A) at byte 1",
		"a\rb":                        "a carriage return",
		"a\tb":                        "a tab",
		"a\x00":                       "NUL",
		"a\x1b[31m":                   "U+001B",
		"a\x7f":                       "U+007F",
		"a\u0085":                     "U+0085",
		"a\u2028b":                    "line separator",
		"\xff":                        "not UTF-8",
	} {
		err := Check("engine_a option \"Threads\" value", in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "engine_a option \"Threads\" value: ") {
			t.Errorf("%q: %v, want the field and %q", in, err, want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r\t\x00\x1b") {
			t.Errorf("%q: the message carries the raw character: %q", in, err)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add("value\nsetoption")
	f.Fuzz(func(t *testing.T, s string) {
		err := Check("f", s)
		_, _, found := FirstControl(s)
		if found && err == nil {
			t.Fatalf("%q: control character passed", s)
		}
		if err != nil && strings.ContainsAny(err.Error()[3:], "\n\r") {
			t.Fatalf("%q: message with a line break", s)
		}
	})
}
