package syzygy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/arbiter-chess/arbiter/engine"
)

// maxTablePieces is the most pieces (kings included) the index scheme
// numbers; the largest published tables have 7.
const maxTablePieces = 7

// tableKind is the kind of a table file.
type tableKind int

const (
	kindWDL tableKind = iota // .rtbw: win/draw/loss
	kindDTZ                  // .rtbz: distance to zeroing
)

var (
	kindSuffix = [...]string{kindWDL: ".rtbw", kindDTZ: ".rtbz"}
	kindMagic  = [...]uint32{kindWDL: 0x5d23e871, kindDTZ: 0xa50c66d7}
)

// ErrClosed is returned by probes after Close.
var ErrClosed = errors.New("syzygy: tablebase closed")

// TableError reports a table file that cannot be used: damaged, truncated,
// or unreadable. Path names the file.
type TableError struct {
	Path string
	Msg  string
}

func (e *TableError) Error() string { return "syzygy table " + e.Path + ": " + e.Msg }

func corrupt(path, format string, args ...any) error {
	return &TableError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// MissingTableError reports a probe that needs a table the directory does
// not hold. Path is the file that was looked for.
type MissingTableError struct {
	Name string // such as "KQvKR"
	Path string
}

func (e *MissingTableError) Error() string {
	return fmt.Sprintf("syzygy: table %s not found (looked for %s)", e.Name, e.Path)
}

// PositionError reports a position tablebases cannot answer for (too many
// pieces, castling rights).
type PositionError struct {
	FEN string
	Msg string
}

func (e *PositionError) Error() string { return fmt.Sprintf("syzygy: position %q: %s", e.FEN, e.Msg) }

// Tablebase is a directory of Syzygy tables, opened lazily table by table.
// It is safe for concurrent use.
type Tablebase struct {
	dir string
	// entries holds each table under its material and, unless symmetric,
	// under the colour-swapped material too.
	entries   map[materialKey]*tableEntry
	maxPieces int
	numTables [2]int

	// load brings a file into memory: mapFile, or readTableFile in the
	// test that compares the two.
	load func(path string, size int64) ([]byte, func() error, error)

	// closeMu is held for reading by every probe and for writing by Close,
	// so that no probe reads a file being unmapped.
	closeMu sync.RWMutex
	closed  bool
}

// tableEntry is one material signature: what its name says and its two
// files, each parsed on first use.
type tableEntry struct {
	name      string
	mat       material // White as named (the generator's orientation)
	key       materialKey
	num       int  // pieces, kings included
	symmetric bool // both sides have the same material
	hasPawns  bool
	// kkEncoding: without pawns, a table with exactly two unique pieces
	// (the kings) numbers the kings together (462 placements); otherwise
	// the first three pieces together.
	kkEncoding bool
	// pawns[0] is the pawn count of the leading colour (the one with fewer
	// pawns, White on a tie, never zero), pawns[1] of the other.
	pawns [2]int
	files [2]lazyTable // by tableKind
}

type lazyTable struct {
	path    string
	present bool
	once    sync.Once
	table   *tableFile
	err     error
}

// Open reads the list of tables in dir (names such as KQvKR.rtbw and
// KQvKR.rtbz); files are opened on their first probe.
func Open(dir string) (*Tablebase, error) {
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("syzygy: tablebase directory: %w", err)
	}
	tb := &Tablebase{dir: dir, entries: map[materialKey]*tableEntry{}, load: mapFile}
	present := map[string]bool{}
	for _, f := range list {
		present[f.Name()] = !f.IsDir()
	}
	for _, f := range list {
		name, ok := strings.CutSuffix(f.Name(), kindSuffix[kindWDL])
		if !ok || f.IsDir() {
			continue
		}
		m, err := parseTableName(name)
		// A name the generator would not write (such as KRvKQ for KQvKR)
		// is skipped: its contents are laid out for the other name.
		if err != nil || m.pieces() > maxTablePieces || canonicalName(m) != name {
			continue
		}
		e := newTableEntry(name, m)
		for kind := range e.files {
			e.files[kind].path = filepath.Join(dir, name+kindSuffix[kind])
			e.files[kind].present = present[name+kindSuffix[kind]]
			if e.files[kind].present {
				tb.numTables[kind]++
			}
		}
		tb.entries[e.key] = e
		mirror := m.mirrored()
		tb.entries[mirror.key()] = e
		tb.maxPieces = max(tb.maxPieces, e.num)
	}
	if len(tb.entries) == 0 {
		return nil, fmt.Errorf("syzygy: no tables (files such as KQvK.rtbw) in %s", dir)
	}
	return tb, nil
}

func newTableEntry(name string, m material) *tableEntry {
	mirror := m.mirrored()
	e := &tableEntry{name: name, mat: m, key: m.key(), num: m.pieces()}
	e.symmetric = mirror.key() == e.key
	e.hasPawns = m[engine.White][engine.Pawn]+m[engine.Black][engine.Pawn] > 0
	if !e.hasPawns {
		unique := 0
		for c := range m {
			for _, n := range m[c] {
				if n == 1 {
					unique++
				}
			}
		}
		e.kkEncoding = unique == 2
	} else {
		w, b := m[engine.White][engine.Pawn], m[engine.Black][engine.Pawn]
		e.pawns = [2]int{w, b}
		if b > 0 && (w == 0 || w > b) {
			e.pawns = [2]int{b, w}
		}
	}
	return e
}

// canonicalName is the name the generator gives material m: the side with
// more pieces first, on a tie the side whose pieces, strongest first, are
// stronger at the first difference.
func canonicalName(m material) string {
	mirror := m.mirrored()
	a, b := m.name(), mirror.name()
	wa, wb := strings.Split(a, "v")[0], strings.Split(b, "v")[0]
	if len(wa) != len(wb) {
		if len(wa) > len(wb) {
			return a
		}
		return b
	}
	strength := func(s string) []int {
		out := make([]int, len(s))
		for i := range s {
			out[i] = strings.IndexByte("KQRBNP", s[i])
		}
		return out
	}
	if slices.Compare(strength(wa), strength(wb)) <= 0 {
		return a
	}
	return b
}

// Dir returns the directory the tables are read from.
func (tb *Tablebase) Dir() string { return tb.dir }

// MaxPieces returns the most pieces (kings included) of any table found.
func (tb *Tablebase) MaxPieces() int { return tb.maxPieces }

// Counts returns how many WDL and DTZ files were found.
func (tb *Tablebase) Counts() (wdl, dtz int) { return tb.numTables[kindWDL], tb.numTables[kindDTZ] }

// Close unmaps every opened file. It waits for probes in flight; probes
// after it return ErrClosed.
func (tb *Tablebase) Close() error {
	tb.closeMu.Lock()
	defer tb.closeMu.Unlock()
	if tb.closed {
		return nil
	}
	tb.closed = true
	var errs []error
	seen := map[*tableEntry]bool{}
	for _, e := range tb.entries {
		if seen[e] {
			continue
		}
		seen[e] = true
		for kind := range e.files {
			lt := &e.files[kind]
			lt.once.Do(func() { lt.err = ErrClosed }) // never open it now
			if lt.table != nil {
				errs = append(errs, lt.table.release())
				lt.table = nil
			}
		}
	}
	return errors.Join(errs...)
}

// table returns the parsed file of the given kind for e, opening it once.
func (tb *Tablebase) table(e *tableEntry, kind tableKind) (*tableFile, error) {
	lt := &e.files[kind]
	if !lt.present {
		return nil, &MissingTableError{Name: e.name, Path: lt.path}
	}
	lt.once.Do(func() { lt.table, lt.err = openTable(tb.load, lt.path, kind, e) })
	return lt.table, lt.err
}

// openTable maps and checks one file.
func openTable(load func(string, int64) ([]byte, func() error, error), path string, kind tableKind, e *tableEntry) (*tableFile, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &TableError{Path: path, Msg: err.Error()}
	}
	// Every complete table file is 16 bytes past a multiple of 64 (the
	// generator pads its data and appends a 16-byte checksum): the cheapest
	// sign of a truncated copy.
	if st.Size()%64 != 16 {
		return nil, corrupt(path, "size %d bytes is not 16 more than a multiple of 64: truncated or not a table", st.Size())
	}
	data, release, err := load(path, st.Size())
	if err != nil {
		return nil, &TableError{Path: path, Msg: err.Error()}
	}
	t, err := parseTable(path, data, kind, e)
	if err != nil {
		release()
		return nil, err
	}
	t.release = release
	return t, nil
}

// entryFor finds the table of pos's material, with a clear error when the
// directory lacks it.
func (tb *Tablebase) entryFor(pos *engine.Position) (*tableEntry, materialKey, error) {
	m := positionMaterial(pos)
	key := m.key()
	if e := tb.entries[key]; e != nil {
		return e, key, nil
	}
	name := canonicalName(m)
	return nil, key, &MissingTableError{Name: name, Path: filepath.Join(tb.dir, name+kindSuffix[kindWDL])}
}
