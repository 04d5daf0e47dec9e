// Package textcheck refuses text that would change meaning on its way to
// an engine, a PGN file or a log: any control character. UCI and xboard
// are line protocols, so a line break in an option value is a second
// command ("\nsetoption name Debug Log File value /path"); a PGN tag value
// with a line break is a second tag; a tab or escape character garbles
// what an operator reads. Every string a client submits that reaches an
// engine's command line, its standard input or a stored game passes here,
// on the coordinator (the API), not only in the CLI.
package textcheck

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// FirstControl returns the first control character of s and its byte
// offset: C0 (line feed, carriage return and tab included), DEL, C1, and
// the Unicode line and paragraph separators, which some readers also
// break lines at.
func FirstControl(s string) (r rune, at int, found bool) {
	for i, c := range s {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' {
			return c, i, true
		}
	}
	return 0, 0, false
}

// Check returns an error naming field when s holds a control character or
// is not UTF-8, nil otherwise. The message shows the character by its code
// point, never raw.
func Check(field, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: not UTF-8", field)
	}
	r, at, found := FirstControl(s)
	if !found {
		return nil
	}
	return fmt.Errorf("%s: %s at byte %d: control characters (line breaks and tabs included) are not allowed",
		field, name(r), at)
}

func name(r rune) string {
	switch r {
	case '\n':
		return "a line feed (U+000A)"
	case '\r':
		return "a carriage return (U+000D)"
	case '\t':
		return "a tab (U+0009)"
	case 0:
		return "a NUL byte (U+0000)"
	case '\u2028', '\u2029':
		return fmt.Sprintf("a line separator (%U)", r)
	}
	return fmt.Sprintf("a control character (%U)", r)
}
