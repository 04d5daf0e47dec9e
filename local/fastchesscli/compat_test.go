package fastchesscli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// fishtestVersion is the pattern Fishtest's worker applies to each line
// of `fastchess --version` (worker/worker.py, verify_fastchess, copied
// verbatim); the group is the commit it compares with its pin.
var fishtestVersion = regexp.MustCompile(`fastchess alpha [0-9]*.[0-9]*.[0-9]* [0-9]*-([0-9a-f-]*)$`)

// TestVersionLines: -version in the fastchess dialect prints one line in
// fastchess's format whose commit Fishtest's verify_fastchess accepts
// (at least 7 digits, a prefix of the commit it pins) and that no other
// line matches, then a line saying the binary is Arbiter and which
// fastchess it is compatible with. In the cutechess-cli dialect no
// fastchess line is printed (control: Fishtest's pattern finds nothing).
func TestVersionLines(t *testing.T) {
	for _, c := range []struct {
		dialect  Dialect
		wantSHA  string
		wantLine string
	}{
		{Fastchess, fishtestPinned.Commit, "arbiter v1.2.3: Arbiter's fastchess command line, not fastchess; compatible with fastchess " + matchedFastchess.Version},
		{Cutechess, "", "arbiter v1.2.3 (fastchess and cutechess-cli command lines)"},
	} {
		inv, err := Parse([]string{"--version"}, c.dialect)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Run(context.Background(), inv, RunOptions{Stdout: &out, Stderr: &out, Version: "v1.2.3"}); err != nil {
			t.Fatal(err)
		}
		sha, matches := "", 0
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if m := fishtestVersion.FindStringSubmatch(l); m != nil {
				sha, matches = m[1], matches+1
			}
		}
		if c.wantSHA == "" {
			if matches != 0 {
				t.Errorf("%v: a fastchess version line in %q", c.dialect, out.String())
			}
		} else if matches != 1 || len(sha) < 7 || !strings.HasPrefix(c.wantSHA, sha) {
			t.Errorf("%v: Fishtest's pattern found %d lines, commit %q (want a prefix of %s) in %q", c.dialect, matches, sha, c.wantSHA, out.String())
		}
		if !strings.Contains(out.String(), c.wantLine) {
			t.Errorf("%v: no %q in %q", c.dialect, c.wantLine, out.String())
		}
	}
}

// TestFastchessNames: engines named as fastchess 1.8.2 names them: after
// the command's stem without name=, and a repeated name with _2, _3.
func TestFastchessNames(t *testing.T) {
	for _, c := range []struct {
		args string
		want []string
	}{
		{"-engine cmd=./sf -engine cmd=./sf", []string{"sf", "sf_2"}},
		{"-engine cmd=/usr/games/stockfish.exe -engine cmd=sf-1.2", []string{"stockfish", "sf-1"}},
		{"-engine cmd=a name=x -engine cmd=b name=x -engine cmd=c name=x", []string{"x", "x_2", "x_3"}},
		{"-engine cmd=sf name=New -engine cmd=sf name=Base", []string{"New", "Base"}},
	} {
		inv, err := Parse(append(strings.Fields(c.args), "-each", "nodes=100"), Fastchess)
		if err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		var names []string
		for _, e := range inv.Flags.Engines {
			_, rest, _ := strings.Cut(e, "name=")
			name, _, _ := strings.Cut(rest, ",")
			names = append(names, name)
		}
		if strings.Join(names, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: names %q, want %q (specs %q)", c.args, names, c.want, inv.Flags.Engines)
		}
	}
	if _, err := Parse([]string{"-engine", "cmd=bin/", "-engine", "cmd=sf", "-each", "nodes=100"}, Fastchess); err == nil || !strings.Contains(err.Error(), "give name=") {
		t.Errorf("cmd=bin/ without a name: %v", err)
	}
}
