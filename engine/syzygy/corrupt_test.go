package syzygy

// Damaged tables: real files from testdata (byte-for-byte copies of
// ../shared/data/syzygy, whose README gives their origin and checksums)
// copied into a temporary directory, then cut short or with bytes flipped.
// Every probe must give either a value or an error naming the file; none
// may panic. A fuzz target drives the same parser and probes from the real
// files' bytes.

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// testPositions draws n legal positions of the table named name.
func testPositions(t testing.TB, name string, n int) []engine.Position {
	t.Helper()
	m, err := parseTableName(name)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, uint64(len(name))))
	out := make([]engine.Position, n)
	for i := range out {
		out[i] = randomPosition(rng, m, i%2 == 1, false)
	}
	return out
}

// testdataTables are the files in testdata.
var testdataTables = []string{"KQvK.rtbw", "KQvK.rtbz", "KPvK.rtbw", "KPvK.rtbz", "KRvK.rtbw", "KBvK.rtbw", "KNvK.rtbw"}

// copyTables copies the named files from testdata into a new directory.
func copyTables(t testing.TB, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// probeAll probes every position (WDL, and DTZ when dtz) and returns the
// first error; a value out of range is reported as a test failure.
func probeAll(t *testing.T, dir string, positions []engine.Position, dtz bool) error {
	t.Helper()
	tb, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	defer tb.Close()
	for i := range positions {
		w, err := tb.ProbeWDL(&positions[i])
		if err != nil {
			return err
		}
		if w < Loss || w > Win {
			t.Fatalf("%s: WDL %d out of range", positions[i].FEN(), w)
		}
		if dtz {
			if _, err := tb.ProbeDTZ(&positions[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// wantErrorNaming fails unless err is a TableError for path whose message
// names it.
func wantErrorNaming(t *testing.T, err error, path, what string) {
	t.Helper()
	var te *TableError
	if !errors.As(err, &te) || te.Path != path || !strings.Contains(err.Error(), path) {
		t.Errorf("%s: got error %v, want a table error naming %s", what, err, path)
	}
}

// TestTruncatedTableIsNamed cuts a real table at several lengths (some
// that keep the size signature, so only the region checks can tell).
func TestTruncatedTableIsNamed(t *testing.T) {
	for _, tc := range []struct {
		file  string
		table string
		dtz   bool
	}{{"KQvK.rtbw", "KQvK", false}, {"KPvK.rtbw", "KPvK", false}, {"KPvK.rtbz", "KPvK", true}, {"KQvK.rtbz", "KQvK", true}} {
		positions := testPositions(t, tc.table, 40)
		full, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		// Control: the intact copy answers every probe.
		dir := copyTables(t, testdataTables...)
		if err := probeAll(t, dir, positions, tc.dtz); err != nil {
			t.Fatalf("%s intact: %v", tc.file, err)
		}
		for _, size := range []int{0, 3, 5, 16, 80, len(full) / 2, len(full) - 64, len(full) - 128, len(full) - 1} {
			if size < 0 || size >= len(full) {
				continue
			}
			path := filepath.Join(dir, tc.file)
			if err := os.WriteFile(path, full[:size], 0o644); err != nil {
				t.Fatal(err)
			}
			err := probeAll(t, dir, positions, tc.dtz)
			wantErrorNaming(t, err, path, tc.file+" cut to "+strconv.Itoa(size)+" bytes")
		}
	}
}

// TestFlippedBytesNeverPanic flips every byte of the headers of real
// tables (and a sample of the rest): each probe gives a value or an error
// naming the file, and flips of the magic number and of the structure are
// caught.
func TestFlippedBytesNeverPanic(t *testing.T) {
	for _, tc := range []struct {
		file, table string
		dtz         bool
		stride      int // bytes past the first 256 flipped one in stride
	}{{"KQvK.rtbw", "KQvK", false, 1}, {"KPvK.rtbw", "KPvK", false, 7}, {"KPvK.rtbz", "KPvK", true, 5}} {
		positions := testPositions(t, tc.table, 24)
		full, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		dir := copyTables(t, testdataTables...)
		path := filepath.Join(dir, tc.file)
		errorsSeen, flips := 0, 0
		for at := 0; at < len(full); at++ {
			if at >= 256 && at%tc.stride != 0 {
				continue
			}
			damaged := append([]byte(nil), full...)
			damaged[at] ^= 0xff
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			flips++
			if err := probeAll(t, dir, positions, tc.dtz); err != nil {
				wantErrorNaming(t, err, path, tc.file+" with byte "+strconv.Itoa(at)+" flipped")
				errorsSeen++
			} else if at < 4 {
				t.Errorf("%s: flipping magic byte %d went unnoticed", tc.file, at)
			}
		}
		if errorsSeen == 0 {
			t.Errorf("%s: %d flips and not one error", tc.file, flips)
		}
		t.Logf("%s: %d single-byte flips, %d gave an error naming the file, the rest a value in range", tc.file, flips, errorsSeen)
	}
}

// TestMissingTableIsNamed: a probe whose material has no table names the
// file it looked for; one whose capture leads to a missing table too.
func TestMissingTableIsNamed(t *testing.T) {
	dir := copyTables(t, "KQvK.rtbw")
	tb, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for _, tc := range []struct{ fen, file string }{
		{"8/8/8/8/8/2k5/8/1R2K3 w - - 0 1", "KRvK.rtbw"},
		{"8/8/8/8/8/2k5/8/1R2K3 b - - 0 1", "KRvK.rtbw"},
		{"8/8/8/8/8/2k5/8/1r2K3 w - - 0 1", "KRvK.rtbw"}, // Black's rook: the same file
		{"8/8/8/8/8/2k5/8/1Q2K3 w - - 0 1", "KQvK.rtbz"},
	} {
		pos, err := engine.ParseFEN(tc.fen)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.ProbeDTZ(&pos)
		var missing *MissingTableError
		if !errors.As(err, &missing) || filepath.Base(missing.Path) != tc.file || !strings.Contains(err.Error(), tc.file) {
			t.Errorf("%s: got %v, want the missing %s named", tc.fen, err, tc.file)
		}
	}
	// Control: the table that is there answers.
	pos, _ := engine.ParseFEN("8/8/8/8/8/2k5/8/1Q2K3 w - - 0 1")
	if w, err := tb.ProbeWDL(&pos); err != nil || w != Win {
		t.Errorf("KQvK: got %v, %v; want win", w, err)
	}
}

// TestRefusedPositions: too many pieces and castling rights are refused
// with the reason.
func TestRefusedPositions(t *testing.T) {
	tb, err := Open(copyTables(t, "KQvK.rtbw"))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	for _, tc := range []struct{ fen, want string }{
		{"8/8/8/8/8/2k5/8/RQ2K3 w - - 0 1", "has 4 pieces; the tables here have at most 3"},
		{"4k3/8/8/8/8/8/8/4K2R w K - 0 1", "castling rights"},
	} {
		pos, err := engine.ParseFEN(tc.fen)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tb.ProbeWDL(&pos)
		var pe *PositionError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a position error saying %q", tc.fen, err, tc.want)
		}
	}
}

// TestClosedTablebaseRefuses: probes after Close fail instead of reading
// unmapped memory.
func TestClosedTablebaseRefuses(t *testing.T) {
	tb, err := Open(copyTables(t, "KQvK.rtbw"))
	if err != nil {
		t.Fatal(err)
	}
	pos, _ := engine.ParseFEN("8/8/8/8/8/2k5/8/1Q2K3 w - - 0 1")
	if _, err := tb.ProbeWDL(&pos); err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.ProbeWDL(&pos); !errors.Is(err, ErrClosed) {
		t.Errorf("probe after Close: %v, want ErrClosed", err)
	}
}

// TestReadFallbackMatchesMapping: the tables read into memory (what
// platforms without mmap use) answer exactly as the mapped ones, and a
// truncated file is named the same way.
func TestReadFallbackMatchesMapping(t *testing.T) {
	dir := copyTables(t, testdataTables...)
	mapped, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer mapped.Close()
	read, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Close()
	read.load = readTableFile
	compared := 0
	for _, table := range []string{"KQvK", "KPvK"} {
		for _, pos := range testPositions(t, table, 200) {
			w1, err1 := mapped.ProbeWDL(&pos)
			w2, err2 := read.ProbeWDL(&pos)
			d1, err3 := mapped.ProbeDTZ(&pos)
			d2, err4 := read.ProbeDTZ(&pos)
			if err := errors.Join(err1, err2, err3, err4); err != nil || w1 != w2 || d1 != d2 {
				t.Fatalf("%s: mapped %v/%d, read %v/%d, %v", pos.FEN(), w1, d1, w2, d2, err)
			}
			compared++
		}
	}
	full, _ := os.ReadFile(filepath.Join(dir, "KPvK.rtbw"))
	path := filepath.Join(dir, "KPvK.rtbw")
	if err := os.WriteFile(path, full[:len(full)-64], 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	again.load = readTableFile
	pos := testPositions(t, "KPvK", 1)[0]
	_, err = again.ProbeWDL(&pos)
	wantErrorNaming(t, err, path, "KPvK.rtbw 64 bytes short, read into memory")
	t.Logf("%d positions probed both ways", compared)
}
