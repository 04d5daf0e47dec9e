package apierr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Hash", `"Hash"`},
		{"a\nb", `"a\nb"`},
		{strings.Repeat("x", 10), `"xxxxxxxx"… (10 bytes)`},
		// Each invalid byte renders as four: two fit in max 8.
		{"\xff\xff\xff", `"\xff\xff"… (3 bytes)`},
		// A character is never cut in half: é is two bytes, four fit in 8.
		{"ééééé", `"éééé"… (10 bytes)`},
		{"xéééé", `"xééé"… (9 bytes)`},
		// An escape is never cut in half: \U000e0041 is ten bytes, more than max.
		{"\U000E0041", `""… (4 bytes)`},
	} {
		if got := Quote(c.in, 8); got != c.want {
			t.Errorf("Quote(%q, 8) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestQShowsInvisibleCharactersEscaped(t *testing.T) {
	if got, want := Q("evil\u202Etxt.exe"), `"evil\u202etxt.exe"`; got != want {
		t.Errorf("Q = %s, want %s", got, want)
	}
}

// FuzzQuote: whatever the input, the quote is at most max bytes between its
// quotes plus the length note, valid UTF-8, and a prefix of the input's own
// quote when cut.
func FuzzQuote(f *testing.F) {
	f.Add(strings.Repeat("\xff", 200))
	f.Add("name=a\u202E")
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s, 100)
		if len(q) > 100+len(`""… (1000000000 bytes)`) {
			t.Fatalf("Quote of %d bytes is %d bytes: %s", len(s), len(q), q)
		}
		if !utf8.ValidString(q) {
			t.Fatalf("Quote(%q) is not UTF-8", s)
		}
	})
}
