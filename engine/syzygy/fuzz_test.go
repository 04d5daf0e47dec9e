package syzygy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// fuzzCases are the files the fuzz target replaces, by its selector byte.
var fuzzCases = []struct {
	table string
	kind  tableKind
}{{"KQvK", kindWDL}, {"KQvK", kindDTZ}, {"KPvK", kindWDL}, {"KPvK", kindDTZ}}

// FuzzTableFile parses arbitrary bytes as a table file (seeded with the
// real files' bytes) and, when they parse, probes positions through them:
// every outcome is a value or an error naming the file, never a panic or
// a hang.
//
//	go test -run '^$' -fuzz FuzzTableFile -fuzztime 60s ./engine/syzygy/
func FuzzTableFile(f *testing.F) {
	for i, c := range fuzzCases {
		data, err := os.ReadFile(filepath.Join("testdata", c.table+kindSuffix[c.kind]))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(i))
	}
	dir := copyTables(f, testdataTables...)
	positions := map[string][]engine.Position{
		"KQvK": testPositions(f, "KQvK", 12),
		"KPvK": testPositions(f, "KPvK", 12),
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		c := fuzzCases[int(which)%len(fuzzCases)]
		tb, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		m, _ := parseTableName(c.table)
		e := tb.entries[m.key()]
		path := "fuzzed/" + c.table + kindSuffix[c.kind]
		parsed, err := parseTable(path, data, c.kind, e)
		if err != nil {
			wantFuzzError(t, err, path)
			return
		}
		// Put the fuzzed file in place of the real one.
		lt := &e.files[c.kind]
		lt.path, lt.present = path, true
		parsed.release = func() error { return nil }
		lt.once.Do(func() { lt.table = parsed })
		for i := range positions[c.table] {
			pos := &positions[c.table][i]
			if c.kind == kindWDL {
				w, err := tb.ProbeWDL(pos)
				if err != nil {
					wantFuzzError(t, err, path)
				} else if w < Loss || w > Win {
					t.Fatalf("%s: WDL %d out of range", pos.FEN(), w)
				}
				continue
			}
			if _, err := tb.ProbeDTZ(pos); err != nil {
				wantFuzzError(t, err, path)
			}
		}
	})
}

func wantFuzzError(t *testing.T, err error, path string) {
	t.Helper()
	var te *TableError
	if !errors.As(err, &te) || te.Path != path {
		t.Fatalf("got error %v, want a table error naming %s", err, path)
	}
}
