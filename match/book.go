package match

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// Book is an opening book in the order it will be played.
//
// Invariants: every Opening in a Book was replayed with the rules library
// when the book was loaded (FEN parsed, every move legal), so a game never
// starts from a bad opening; Openings[i].ID is the entry's index in the file.
type Book struct {
	Path     string
	Openings []Opening
}

// BookOptions select and order a book's openings.
type BookOptions struct {
	Path   string // .epd or .pgn, optionally inside a .zip (the first file)
	Format string // "epd" or "pgn"; "" = from the file name
	Order  string // "sequential" (default) or "random"
	Seed   uint64 // for random order: the same seed gives the same order
	Plies  int    // PGN: keep at most this many plies of each opening (0 = all)
	Start  int    // skip this many openings (after ordering): resume a run
}

// LoadBook reads, checks and orders a book. Errors name the file and line.
func LoadBook(o BookOptions) (*Book, error) {
	f, err := openBookFile(o.Path)
	if err != nil {
		return nil, fmt.Errorf("openings %q: %w", o.Path, err)
	}
	defer f.Close()
	format := o.Format
	if format == "" {
		name := strings.TrimSuffix(strings.ToLower(o.Path), ".zip")
		switch {
		case strings.HasSuffix(name, ".epd") || strings.HasSuffix(name, ".fen"):
			format = "epd"
		case strings.HasSuffix(name, ".pgn"):
			format = "pgn"
		default:
			return nil, fmt.Errorf("openings %q: cannot tell the format from the name: give format=epd or format=pgn", o.Path)
		}
	}
	var ops []Opening
	switch format {
	case "epd":
		ops, err = readEPD(f, o.Path)
	case "pgn":
		ops, err = readPGN(f, o.Path, o.Plies)
	default:
		return nil, fmt.Errorf("openings %q: unknown format %q (want epd or pgn)", o.Path, format)
	}
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, fmt.Errorf("openings %q: no openings in the file", o.Path)
	}
	if ops, err = OrderOpenings(ops, o.Order, o.Seed, o.Start); err != nil {
		return nil, fmt.Errorf("openings %q: %w", o.Path, err)
	}
	return &Book{Path: o.Path, Openings: ops}, nil
}

// At returns the opening for game pair i; the book wraps around.
func (b *Book) At(i int) Opening { return b.Openings[i%len(b.Openings)] }

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

func openBookFile(path string) (io.ReadCloser, error) {
	if strings.EqualFold(filepath.Ext(path), ".zip") {
		z, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		for _, f := range z.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				z.Close()
				return nil, err
			}
			return readCloser{rc, func() error { rc.Close(); return z.Close() }}, nil
		}
		z.Close()
		return nil, fmt.Errorf("empty zip archive")
	}
	return os.Open(path)
}

// readEPD reads one position per line: the four FEN fields, optionally the
// two move counters, then EPD operations (ignored).
func readEPD(r io.Reader, name string) ([]Opening, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ops []Opening
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return nil, fmt.Errorf("openings %s:%d: %q is not an EPD line (want at least 4 FEN fields)", name, ln, line)
		}
		fen := strings.Join(f[:4], " ")
		if len(f) >= 6 && isUint(f[4]) && isUint(strings.TrimSuffix(f[5], ";")) {
			fen += " " + f[4] + " " + strings.TrimSuffix(f[5], ";")
		} else {
			fen += " 0 1"
		}
		pos, err := engine.ParseFEN(fen)
		if err != nil {
			return nil, fmt.Errorf("openings %s:%d: %v", name, ln, err)
		}
		ops = append(ops, Opening{ID: len(ops), FEN: pos.FEN(), Chess960: pos.IsChess960()})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("openings %s: %w", name, err)
	}
	return ops, nil
}

func isUint(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

// readPGN reads the main line of every game (comments, variations, NAGs and
// move numbers skipped), replays it and keeps it as UCI moves.
func readPGN(r io.Reader, name string, plies int) ([]Opening, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var ops []Opening
	var (
		tags      = map[string]string{}
		movetext  bytes.Buffer
		startLine = 0
		ln        = 0
		inGame    = false
	)
	flush := func() error {
		if !inGame {
			return nil
		}
		op, err := pgnOpening(tags, movetext.Bytes(), plies)
		if err != nil {
			return fmt.Errorf("openings %s:%d: %v", name, startLine, err)
		}
		op.ID = len(ops)
		ops = append(ops, op)
		clear(tags)
		movetext.Reset()
		inGame = false
		return nil
	}
	sawMoves := false
	for {
		line, err := br.ReadString('\n')
		if line == "" && err != nil {
			break
		}
		ln++
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			if sawMoves {
				if err := flush(); err != nil {
					return nil, err
				}
				sawMoves = false
			}
			if !inGame {
				inGame, startLine = true, ln
			}
			if k, v, ok := parseTag(t); ok {
				tags[k] = v
			}
			continue
		}
		if t == "" || strings.HasPrefix(t, "%") {
			continue
		}
		if !inGame {
			inGame, startLine = true, ln
		}
		sawMoves = true
		movetext.WriteString(t)
		movetext.WriteByte('\n')
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return ops, nil
}

func parseTag(t string) (k, v string, ok bool) {
	t = strings.TrimSuffix(strings.TrimPrefix(t, "["), "]")
	k, v, ok = strings.Cut(t, " ")
	if !ok {
		return "", "", false
	}
	v = strings.TrimSpace(v)
	v = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
	v = strings.ReplaceAll(v, `\"`, `"`)
	return k, v, true
}

// pgnOpening replays one game's movetext.
func pgnOpening(tags map[string]string, text []byte, plies int) (Opening, error) {
	var op Opening
	pos := engine.StartPosition()
	if fen, ok := tags["FEN"]; ok {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return op, fmt.Errorf("FEN tag: %v", err)
		}
		pos = p
		op.FEN = pos.FEN()
	}
	if v := strings.ToLower(tags["Variant"]); strings.Contains(v, "960") || strings.Contains(v, "fischer") {
		pos.SetChess960(true)
	}
	op.Chess960 = pos.IsChess960()
	depth := 0 // variation nesting
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '{':
			j := bytes.IndexByte(text[i:], '}')
			if j < 0 {
				return op, fmt.Errorf("unterminated comment")
			}
			i += j + 1
			continue
		case c == ';':
			j := bytes.IndexByte(text[i:], '\n')
			if j < 0 {
				j = len(text) - i
			}
			i += j
			continue
		case c == '(':
			depth++
			i++
			continue
		case c == ')':
			depth--
			i++
			continue
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
			continue
		}
		j := i
		for j < len(text) && !strings.ContainsRune(" \n\t\r{}();", rune(text[j])) {
			j++
		}
		if j == i {
			i++ // a stray '}': no token, but the scan must move on
			continue
		}
		tok := string(text[i:j])
		i = j
		if depth > 0 || tok == "" || tok[0] == '$' {
			continue
		}
		switch tok {
		case "1-0", "0-1", "1/2-1/2", "*":
			continue
		}
		// Strip a move number ("12." or "12...") glued to the move.
		k := 0
		for k < len(tok) && tok[k] >= '0' && tok[k] <= '9' {
			k++
		}
		if k > 0 && k < len(tok) && tok[k] == '.' {
			tok = strings.TrimLeft(tok[k:], ".")
		} else if k == len(tok) {
			continue
		}
		if tok == "" {
			continue
		}
		tok = strings.TrimRight(tok, "!?")
		if plies > 0 && len(op.Moves) >= plies {
			continue
		}
		m, err := pos.ParseSAN(tok)
		if err != nil {
			return op, fmt.Errorf("move %d %q: %v", len(op.Moves)+1, tok, err)
		}
		op.Moves = append(op.Moves, pos.UCIMove(m))
		pos.MakeMove(m)
	}
	return op, nil
}
