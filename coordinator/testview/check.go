package testview

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/textcheck"
)

// What a test is found by: its tags and notes (part of its spec, so they
// are stored and copied with it). The workload checks them at submission
// and modification; the forms check them first to name the bad field.

// Bounds of a test's tags and notes.
const (
	MaxTags     = 8
	MaxTagBytes = 32
	MaxNotes    = 2000
)

// CheckTags returns tags lower-cased, without duplicates, in their order,
// or an error naming the bad tag: a tag is 1 to MaxTagBytes of letters,
// digits, '-', '_' and '.'.
func CheckTags(tags []string) ([]string, error) {
	if len(tags) > MaxTags {
		return nil, apierr.Invalid("tags: %d given, at most %d", len(tags), MaxTags)
	}
	var out []string
	for _, t := range tags {
		t, err := CheckWord("tag", t)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// CheckWord returns a tag or a group name lower-cased, or an error naming
// it (what): 1 to MaxTagBytes of letters, digits, '-', '_' and '.'.
func CheckWord(what, t string) (string, error) {
	t = strings.ToLower(strings.TrimSpace(t))
	if t == "" || len(t) > MaxTagBytes {
		return "", apierr.Invalid("%s %s: want 1 to %d letters, digits, '-', '_' or '.'", what, apierr.Q(t), MaxTagBytes)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return "", apierr.Invalid("%s %s: %q is not a letter, digit, '-', '_' or '.'", what, apierr.Q(t), r)
		}
	}
	return t, nil
}

// CheckNotes refuses notes longer than MaxNotes bytes, not UTF-8, or with
// control or invisible characters other than line breaks and tabs.
func CheckNotes(notes string) error {
	if len(notes) > MaxNotes || !utf8.ValidString(notes) {
		return apierr.Invalid("notes: must be at most %d bytes of UTF-8 (%d given)", MaxNotes, len(notes))
	}
	if err := textcheck.CheckMultiline("notes", notes); err != nil {
		return apierr.Invalid("%s", err.Error())
	}
	return nil
}
