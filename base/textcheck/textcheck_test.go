package textcheck

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, ok := range []string{"", "Stockfish 17", "Hash", "C:/engines/x y", "Élo ± 5", "κ", "שחמט", "شطرنج", "Stockfish 🐟"} {
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
		// Bidi overrides and isolates: "evil\u202Eexe.txt" shows as "eviltxt.exe".
		"evil\u202Eexe.txt": "a right-to-left override (U+202E) at byte 4",
		"a\u202Ab":          "U+202A",
		"a\u202Db":          "U+202D",
		"a\u2066b":          "U+2066",
		"a\u2069b":          "U+2069",
		"a\u200Eb":          "U+200E",
		"a\u200Fb":          "U+200F",
		"a\u061Cb":          "U+061C",
		// Zero-width and other invisible characters: "Stock\u200Bfish" looks like "Stockfish".
		"Stock\u200Bfish": "a zero-width space (U+200B)",
		"a\u200Cb":        "U+200C",
		"a\u200Db":        "U+200D",
		"a\u2060b":        "U+2060",
		"\uFEFFHash":      "a byte order mark (U+FEFF) at byte 0",
		"a\u00ADb":        "an invisible format character (U+00AD)",
		"a\U000E0041b":    "U+E0041",
		"a\u3164b":        "U+3164",
	} {
		err := Check("engine_a option \"Threads\" value", in)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "engine_a option \"Threads\" value: ") {
			t.Errorf("%q: %v, want the field and %q", in, err, want)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\n\r\t\x00\x1b\u202A\u202D\u202E\u2066\u2069\u200B\u200C\u200D\u200E\u200F\u2060\uFEFF\u061C\u00AD\u3164\U000E0041") {
			t.Errorf("%q: the message carries the raw character: %q", in, err)
		}
	}
}

// TestCheckMultiline: notes keep their line breaks and tabs, and are refused
// every other control and invisible character.
func TestCheckMultiline(t *testing.T) {
	if err := CheckMultiline("notes", "line one\r\nline two\tcolumn"); err != nil {
		t.Errorf("line breaks and tabs: %v", err)
	}
	for in, want := range map[string]string{"a\x1bb": "U+001B", "see \u202Etxt.exe": "U+202E", "\u200B": "U+200B", "\xff": "not UTF-8"} {
		if err := CheckMultiline("notes", in); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "notes: ") {
			t.Errorf("%q: %v, want notes: and %q", in, err, want)
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
