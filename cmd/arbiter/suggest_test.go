package main

import (
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/client/cliexit"
)

// A mistyped flag or subcommand is refused (status 2) with the names it
// is closest to, at every level of the command tree; a group given an
// unknown word no longer prints its help and exits 0.
func TestFlagAndCommandSuggestions(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"perft", "--dept", "3"}, "unknown flag: --dept; did you mean --depth?"},
		{[]string{"up", "--worker", "2"}, "did you mean --workers?"},
		{[]string{"submit", "sprt", "--coordinatr", "x"}, "did you mean --coordinator?"},
		{[]string{"sprt", "-penta", "1,2,3,4,5"}, "did you mean --penta?"},
		{[]string{"perft", "--xyzzy"}, "unknown flag: --xyzzy (see arbiter perft --help)"},
		{[]string{"engine", "lsit"}, `unknown command "lsit" for "arbiter engine"; did you mean list?`},
		{[]string{"submit", "sprtt"}, `unknown command "sprtt" for "arbiter submit"; did you mean sprt?`},
		{[]string{"token", "crate"}, "did you mean create?"},
		{[]string{"pertf"}, "perft"},
	}
	for _, c := range cases {
		_, _, err := runArbiter(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || cliexit.Code(err, 2) != 2 {
			t.Errorf("arbiter %s: %v (status %d), want %q", strings.Join(c.args, " "), err, cliexit.Code(err, 2), c.want)
		}
	}
	// A group without a word still shows its help.
	out, _, err := runArbiter(t, "", "engine")
	if err != nil || !strings.Contains(out, "Available Commands:") {
		t.Errorf("arbiter engine: %v\n%s", err, out)
	}
}
