package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tbTestTables copies the small tables of engine/syzygy/testdata.
func tbTestTables(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot, "engine", "syzygy", "testdata")
	dir := t.TempDir()
	for _, name := range []string{"KQvK.rtbw", "KQvK.rtbz", "KPvK.rtbw", "KPvK.rtbz", "KRvK.rtbw", "KBvK.rtbw", "KNvK.rtbw"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTBProbeCommand runs `arbiter tb probe` as a process: values agree
// with Fathom's for the same positions (fathom --path=DIR FEN printed WDL
// Win, DTZ 11 and Loss, DTZ 14 with moves Kc3, Kc4, Ke4), and each kind of
// bad input or damaged file gets its exit status and a message naming it.
func TestTBProbeCommand(t *testing.T) {
	dir := tbTestTables(t)
	const white = "8/8/8/8/8/3k4/8/3K2Q1 w - - 0 1"
	const black = "8/8/8/8/8/3k4/8/3K2Q1 b - - 0 1"

	stdout, stderr, code := runMain(t, "tb", "probe", "--path", dir, "--json", white)
	var report struct {
		WDL    int    `json:"wdl"`
		Result string `json:"result"`
		DTZ    int    `json:"dtz"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &report) != nil || report.WDL != 2 || report.Result != "win" || report.DTZ != 11 {
		t.Errorf("KQvK white to move: exit %d, stdout %q, stderr %q; want win, DTZ 11", code, stdout, stderr)
	}
	// The FEN as separate words, with the moves ranked.
	stdout, stderr, code = runMain(t, append([]string{"tb", "probe", "--path", dir, "--moves"}, strings.Fields(black)...)...)
	for _, want := range []string{"wdl       loss (-2)", "dtz       -14", "Kc3", "Kc4", "Ke4"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("KQvK black to move: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
		}
	}

	damaged := t.TempDir()
	full, err := os.ReadFile(filepath.Join(dir, "KQvK.rtbw"))
	if err != nil {
		t.Fatal(err)
	}
	// 64 bytes short keeps the size signature of a whole file: only the
	// region checks can tell.
	if err := os.WriteFile(filepath.Join(damaged, "KQvK.rtbw"), full[:len(full)-64], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no path", []string{white}, 2, "--path: required"},
		{"bad FEN", []string{"--path", dir, "8/8/8/8/8/3k4/8/3K2Q9 w - - 0 1"}, 2, `FEN: invalid FEN "8/8/8/8/8/3k4/8/3K2Q9 w - - 0 1": piece placement`},
		{"too many pieces", []string{"--path", dir, "8/8/8/8/8/3k4/8/R2K2Q1 w - - 0 1"}, 2, "has 4 pieces; the tables here have at most 3"},
		{"castling", []string{"--path", dir, "4k3/8/8/8/8/8/8/4K2R w K - 0 1"}, 2, "castling rights"},
		{"missing table", []string{"--path", dir, "8/8/8/8/8/3k4/8/3K2R1 w - - 0 1"}, 2, "table KRvK not found (looked for " + filepath.Join(dir, "KRvK.rtbz")},
		{"no such directory", []string{"--path", filepath.Join(dir, "nope"), white}, 2, "--path " + filepath.Join(dir, "nope")},
		{"truncated table", []string{"--path", damaged, white}, 1, "syzygy table " + filepath.Join(damaged, "KQvK.rtbw") + ": data of sub-table 0 runs past the end"},
	} {
		_, stderr, code := runMain(t, append([]string{"tb", "probe"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q", tc.name, code, stderr, tc.code, tc.want)
		}
	}
}
