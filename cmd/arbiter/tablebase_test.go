package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine/syzygy/syzygytest"
)

// TestLocalMatchTakesSyzygyPath: a local user may point the embedded
// engine at tablebases (the coordinator refuses it from clients): a local
// match with SyzygyPath plays its games, and a path that does not exist
// is refused before any game with an error naming the option and path.
func TestLocalMatchTakesSyzygyPath(t *testing.T) {
	dir := syzygytest.Dir(t, "KQvKR.rtbz")
	book := filepath.Join("..", "..", "books", "endgames-100.epd")
	match := func(path string) (string, error) {
		out, errOut, err := runArbiter(t, "", "match", "--engine", "name=tb,builtin,option.SyzygyPath="+path, "--engine", "name=base,builtin",
			"--each", "depth=2", "--openings", "file="+book+",format=epd", "--games", "2", "--json", "--state", filepath.Join(t.TempDir(), "state.json"))
		return out + errOut, err
	}
	out, err := match("/no/such/tables")
	if err == nil || !strings.Contains(out+err.Error(), `option "SyzygyPath": directory "/no/such/tables" does not exist`) {
		t.Errorf("a missing directory: %v, %s", err, out)
	}
	out, err = match(dir)
	if err != nil || !strings.Contains(out, `"games": 2,`) {
		t.Fatalf("with tables: %v, %s", err, out)
	}
}
