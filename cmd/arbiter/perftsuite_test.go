package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubmitPerftSuiteBadInput: each bad suite request is refused (exit
// 2) before any coordinator is dialled (the address is unreachable),
// naming the input and what is wrong. The control: a good EPD gets past
// the checks and fails only on the unreachable coordinator (exit 3).
func TestSubmitPerftSuiteBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.epd")
	bad := filepath.Join(dir, "bad.epd")
	os.WriteFile(good, []byte("# two positions\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n8/8/8/8/8/8/8/K6k w - - ;D1 3\n"), 0o644)
	os.WriteFile(bad, []byte("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1\n"), 0o644)
	client := []string{"--coordinator", "127.0.0.1:1", "--token", "x"}
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--epd", bad, "--depth", "3"}, bad + ":3: ", 2},
		{[]string{"--epd", filepath.Join(dir, "none.epd"), "--depth", "3"}, "none.epd", 2},
		{[]string{"--epd", good, "--fen", "8/8/8/8/8/8/8/K6k w - - 0 1", "--depth", "3"}, "--fen with --epd or --chess960-all", 2},
		{[]string{"--epd", good, "--chess960-all", "--depth", "3"}, "--epd and --chess960-all: give one suite", 2},
		{[]string{"--chess960-all", "--depth", "0"}, "--depth 0: a suite needs depth 1 or more", 2},
		{[]string{"--chess960-all", "--depth", "99"}, "--depth", 2},
		{[]string{"--epd", good}, "--depth", 2},
		{[]string{"--epd", good, "--depth", "3"}, "127.0.0.1:1", 3},
	} {
		out, code := runCmd(t, append(append([]string{"submit", "perft"}, c.args...), client...)...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d naming %q", c.args, code, out, c.code, c.want)
		}
	}
}
