// Package textcheck refuses text that would change meaning, or look like
// other text, on its way to an engine, a PGN file, a web page or a log.
//
// Two classes of character are refused, both declared once, in refused
// below:
//   - control characters: UCI and xboard are line protocols, so a line
//     break in an option value is a second command ("\nsetoption name Debug
//     Log File value /path"); a PGN tag value with a line break is a second
//     tag; a tab or escape character garbles what an operator reads.
//   - invisible format characters (Unicode category Cf and the Hangul
//     fillers): bidirectional overrides and isolates (U+202A..U+202E,
//     U+2066..U+2069, U+200E, U+200F, U+061C) make "exe.txt" display as
//     "txt.exe", and zero-width characters (U+200B..U+200D, U+2060, U+FEFF)
//     make two names that look identical differ. Neither has a use in an
//     engine name, an option or a PGN tag.
//
// Every string a client submits that reaches an engine's command line, its
// standard input or a stored game passes here, on the coordinator (the
// API), not only in the CLI. An error shows the character by its code
// point, never raw.
package textcheck

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// class is one kind of refused character and how an error names it.
type class struct {
	is   func(rune) bool
	what string // "a control character"
	why  string // the end of the error message
}

// refused is the one list of what this package refuses, in the order it is
// tested.
var refused = []class{
	{is: isControl, what: "a control character",
		why: "control characters (line breaks and tabs included) are not allowed"},
	{is: isInvisible, what: "an invisible format character",
		why: "invisible format characters (bidirectional overrides, zero-width characters) are not allowed"},
}

// isControl: C0 (line feed, carriage return and tab included), DEL, C1, and
// the Unicode line and paragraph separators, which some readers also break
// lines at.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// isInvisible: Unicode's format characters (Cf: the bidi controls, zero-width
// space, joiners, word joiner, byte order mark, soft hyphen, tag
// characters...) and the Hangul fillers, which render as nothing but are
// letters (Lo), so Cf alone misses them.
func isInvisible(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// FirstControl returns the first refused character of s (a control or an
// invisible format character, see refused) and its byte offset.
func FirstControl(s string) (r rune, at int, found bool) {
	r, at, k := first(s, false)
	return r, at, k != nil
}

// first is FirstControl with the class of the character found (nil for
// none); with lineBreaksOK it lets line feeds, carriage returns and tabs
// through (multi-line text such as notes).
func first(s string, lineBreaksOK bool) (r rune, at int, k *class) {
	for i, c := range s {
		if lineBreaksOK && (c == '\n' || c == '\r' || c == '\t') {
			continue
		}
		for j := range refused {
			if refused[j].is(c) {
				return c, i, &refused[j]
			}
		}
	}
	return 0, 0, nil
}

// Check returns an error naming field when s holds a control or invisible
// format character or is not UTF-8, nil otherwise.
func Check(field, s string) error {
	return check(field, s, false)
}

// CheckMultiline is Check for text of several lines (a test's notes): line
// feeds, carriage returns and tabs are allowed, every other refused
// character is not.
func CheckMultiline(field, s string) error {
	return check(field, s, true)
}

func check(field, s string, lineBreaksOK bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: not UTF-8", field)
	}
	r, at, k := first(s, lineBreaksOK)
	if k == nil {
		return nil
	}
	return fmt.Errorf("%s: %s at byte %d: %s", field, name(r, k.what), at, k.why)
}

func name(r rune, what string) string {
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
	case '\u202E':
		return "a right-to-left override (U+202E)"
	case '\u200B':
		return "a zero-width space (U+200B)"
	case '\uFEFF':
		return "a byte order mark (U+FEFF)"
	}
	return fmt.Sprintf("%s (%U)", what, r)
}
