package epd

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// Bounds of what a suite may hold: a suite is the user's file here and a
// submitter's data on the farm, so nothing in it sizes a loop unchecked.
const (
	MaxSuiteBytes    = 16 << 20 // the whole file
	MaxLineBytes     = 16 << 10 // one line (WAC's longest is 379 bytes)
	MaxPositions     = 20000    // STS, the largest common suite, has 1,500
	MaxMovesPerOp    = 64       // moves in one bm or am
	MaxIDBytes       = 200
	maxReportedLines = 20 // line errors a SuiteError lists
)

// Position is one suite line after validation: every bm and am move is
// legal in the position.
type Position struct {
	Line     int    // 1-based line of the file
	ID       string // the id operation, or "line N"
	FEN      string // the position in FEN (counters included)
	Chess960 bool   // the castling field can only be Chess960
	Best     []string
	Avoid    []string // bm and am in UCI notation (king takes rook in Chess960)
	Comments []Comment

	pos   engine.Position
	best  []engine.Move
	avoid []engine.Move
}

// Comment is a c0..c9 operation.
type Comment struct {
	N    int
	Text string
}

// Position returns the parsed position.
func (p *Position) Position() engine.Position { return p.pos }

// Solves reports whether m (legal in the position) solves it: one of bm
// when there is a bm, and none of am.
func (p *Position) Solves(m engine.Move) bool {
	if slices.Contains(p.avoid, m) {
		return false
	}
	return len(p.best) == 0 || slices.Contains(p.best, m)
}

// SolvesUCI reports whether a move the engine wrote in UCI notation
// solves the position; a move that is not legal there never does.
func (p *Position) SolvesUCI(mv string) bool {
	m, err := p.pos.ParseUCIMove(mv)
	return err == nil && p.Solves(m)
}

// Suite is a parsed EPD file.
type Suite struct {
	Name      string // the file as the user named it
	Positions []Position
}

// LineError is what is wrong with one line of a suite.
type LineError struct {
	File string
	Line int
	Msg  string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// SuiteError lists the lines of a suite that were refused (the first
// maxReportedLines of them; More counts the rest).
type SuiteError struct {
	Lines []*LineError
	More  int
}

func (e *SuiteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d line(s) refused:", len(e.Lines)+e.More)
	for _, l := range e.Lines {
		b.WriteString("\n  ")
		b.WriteString(l.Error())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.More)
	}
	return b.String()
}

// ParseSuite reads an EPD suite. Every line is checked and every refused
// line is reported with its number; a suite with any refused line is
// refused whole (a run over part of a suite would report a solve rate of
// another suite). Blank lines are skipped; CR line ends and NUL bytes at
// the end of a line (Bratko-Kopec and Kaufman as they are published) are
// padding.
func ParseSuite(name string, data []byte) (*Suite, error) {
	if len(data) > MaxSuiteBytes {
		return nil, fmt.Errorf("suite %s: %d bytes, more than %d", name, len(data), MaxSuiteBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	s := &Suite{Name: name}
	var errs SuiteError
	ids := map[string]int{}
	for n, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimRight(string(raw), "\r\x00 \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		fail := func(format string, args ...any) {
			if len(errs.Lines) < maxReportedLines {
				errs.Lines = append(errs.Lines, &LineError{File: name, Line: n + 1, Msg: fmt.Sprintf(format, args...)})
			} else {
				errs.More++
			}
		}
		if len(s.Positions) >= MaxPositions {
			fail("more than %d positions", MaxPositions)
			break
		}
		p, err := parseLine(line, n+1)
		if err != nil {
			fail("%v", err)
			continue
		}
		if prev, dup := ids[p.ID]; dup {
			fail("id %q is already the id of line %d", p.ID, prev)
			continue
		}
		ids[p.ID] = p.Line
		s.Positions = append(s.Positions, p)
	}
	if len(errs.Lines) > 0 {
		return nil, &errs
	}
	if len(s.Positions) == 0 {
		return nil, fmt.Errorf("suite %s: no positions", name)
	}
	return s, nil
}

// parseLine reads one EPD line: four position fields, optionally the two
// move counters, then operations "opcode operand ...;". The position may
// be followed by ';' (Bratko-Kopec) or directly by the first operation
// (WAC).
func parseLine(line string, n int) (Position, error) {
	if len(line) > MaxLineBytes {
		return Position{}, fmt.Errorf("%d bytes, more than %d", len(line), MaxLineBytes)
	}
	if i := strings.IndexFunc(line, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }); i >= 0 {
		return Position{}, fmt.Errorf("control character %q at byte %d", line[i], i+1)
	}
	fields, rest := positionFields(line)
	pos, err := engine.ParseFEN(strings.Join(fields, " "))
	if err != nil {
		var fe *engine.FENError
		if errors.As(err, &fe) {
			return Position{}, fmt.Errorf("the position is not legal: %s: %s", fe.Field, fe.Msg)
		}
		return Position{}, fmt.Errorf("the position is not legal: %v", err)
	}
	if !pos.HasLegalMove() {
		return Position{}, fmt.Errorf("the position has no legal move (checkmate or stalemate)")
	}
	p := Position{Line: n, ID: "line " + strconv.Itoa(n), FEN: pos.FEN(), Chess960: pos.IsChess960(), pos: pos}
	ops, err := operations(rest)
	if err != nil {
		return Position{}, err
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.code] && (op.code == "bm" || op.code == "am" || op.code == "id") {
			return Position{}, fmt.Errorf("%s given twice", op.code)
		}
		seen[op.code] = true
		if err := p.apply(op); err != nil {
			return Position{}, err
		}
	}
	if len(p.best) == 0 && len(p.avoid) == 0 {
		return Position{}, fmt.Errorf("no bm or am operation: nothing says what solves the position")
	}
	return p, nil
}

// positionFields cuts the position off an EPD line: four fields, and the
// two counters when both follow as numbers (a FEN rather than an EPD).
func positionFields(line string) (fields []string, rest string) {
	rest = line
	for len(fields) < 6 {
		f, r := cutField(rest)
		if f == "" || len(fields) >= 4 && !isCounter(f) {
			break
		}
		if len(fields) == 4 {
			if g, _ := cutField(r); !isCounter(g) {
				break
			}
		}
		fields, rest = append(fields, f), r
	}
	return fields, rest
}

// cutField cuts the first field off s; a ';' ends a field too ("0 1;
// bm d5": the position ends there).
func cutField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t;")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func isCounter(f string) bool {
	_, err := strconv.Atoi(f)
	return err == nil && f != "" && f[0] != '-' && f[0] != '+'
}

type operation struct {
	code     string
	operands []string
}

var opcodeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,14}$`)

// operations splits the text after the position into operations at ';'
// outside double quotes; a quoted operand is one operand, its quotes
// removed.
func operations(s string) ([]operation, error) {
	var (
		ops  []operation
		cur  []string
		word strings.Builder
		inQ  bool
		hasW bool
	)
	endWord := func() {
		if hasW {
			cur = append(cur, word.String())
		}
		word.Reset()
		hasW = false
	}
	endOp := func() error {
		endWord()
		if len(cur) == 0 {
			return nil
		}
		if !opcodeRE.MatchString(cur[0]) {
			return fmt.Errorf("%q is not an operation (an opcode such as bm, am, id, c0)", cur[0])
		}
		ops = append(ops, operation{code: cur[0], operands: cur[1:]})
		cur = nil
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQ, hasW = !inQ, true
		case inQ:
			word.WriteByte(c)
		case c == ';':
			if err := endOp(); err != nil {
				return nil, err
			}
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteByte(c)
			hasW = true
		}
	}
	if inQ {
		return nil, fmt.Errorf("a quote (\") is not closed")
	}
	if err := endOp(); err != nil {
		return nil, err
	}
	return ops, nil
}

// apply records one operation; unknown opcodes (acd, ce, pv, dm, ...) are
// kept by no one and refused by no one, as the EPD standard wants.
func (p *Position) apply(op operation) error {
	switch {
	case op.code == "bm" || op.code == "am":
		moves, err := p.parseMoves(op)
		if err != nil {
			return err
		}
		for _, m := range moves {
			if op.code == "bm" {
				p.best = append(p.best, m)
				p.Best = append(p.Best, p.pos.UCIMove(m))
			} else {
				p.avoid = append(p.avoid, m)
				p.Avoid = append(p.Avoid, p.pos.UCIMove(m))
			}
		}
	case op.code == "id":
		id := strings.Join(op.operands, " ")
		switch {
		case id == "":
			return fmt.Errorf("id without a value")
		case len(id) > MaxIDBytes:
			return fmt.Errorf("id of %d bytes, more than %d", len(id), MaxIDBytes)
		}
		p.ID = id
	case len(op.code) == 2 && op.code[0] == 'c' && op.code[1] >= '0' && op.code[1] <= '9':
		p.Comments = append(p.Comments, Comment{N: int(op.code[1] - '0'), Text: strings.Join(op.operands, " ")})
	}
	return nil
}

// parseMoves reads the moves of a bm or am operation. A check or mate
// mark standing alone ("Qd1 +", Bratko-Kopec's spacing) belongs to the
// move before it.
func (p *Position) parseMoves(op operation) ([]engine.Move, error) {
	var texts []string
	for _, t := range op.operands {
		if strings.Trim(t, "+#!?") == "" && len(texts) > 0 {
			texts[len(texts)-1] += t
			continue
		}
		texts = append(texts, t)
	}
	switch {
	case len(texts) == 0:
		return nil, fmt.Errorf("%s without a move", op.code)
	case len(texts) > MaxMovesPerOp:
		return nil, fmt.Errorf("%s with %d moves, more than %d", op.code, len(texts), MaxMovesPerOp)
	}
	moves := make([]engine.Move, 0, len(texts))
	for _, t := range texts {
		m, err := parseMove(&p.pos, t)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", op.code, strconv.Quote(t), err)
		}
		if slices.Contains(moves, m) {
			return nil, fmt.Errorf("%s %s: the same move twice", op.code, strconv.Quote(t))
		}
		moves = append(moves, m)
	}
	return moves, nil
}

// The notations a bm or am move may be written in. The engine's parsers
// accept more (they read games leniently); these keep a typo such as
// "Bcx3" from being read as some legal move.
var (
	uciRE = regexp.MustCompile(`^[a-h][1-8][a-h][1-8][qrbn]?$`)
	sanRE = regexp.MustCompile(`^(?:` +
		`[NBRQK][a-h]?[1-8]?x?[a-h][1-8]` + // piece moves, SAN
		`|[NBRQK][a-h][1-8][-x][a-h][1-8]` + // piece moves, LAN (Nf3-e5, Ng1xf3)
		`|(?:[a-h]x)?[a-h][1-8](?:=?[NBRQ])?` + // pawn moves, SAN
		`|[a-h][1-8][-x][a-h][1-8](?:=?[NBRQ])?` + // pawn moves, LAN (e2-e4)
		`|O-O(?:-O)?|0-0(?:-0)?` +
		`)[+#]?[!?]{0,2}$`)
)

// parseMove reads a move in SAN, LAN or UCI notation and checks that it is
// legal in pos and, in SAN, that it names one move.
func parseMove(pos *engine.Position, t string) (engine.Move, error) {
	if uciRE.MatchString(t) {
		m, err := pos.ParseUCIMove(t)
		if err != nil {
			return engine.NullMove, moveErr(err)
		}
		return m, nil
	}
	if !sanRE.MatchString(t) {
		return engine.NullMove, fmt.Errorf("not a move in SAN, LAN or UCI notation")
	}
	m, err := pos.ParseSAN(t)
	if err != nil {
		return engine.NullMove, moveErr(err)
	}
	return m, nil
}

// moveErr keeps the engine's reason and drops the position it repeats
// (the line is named already).
func moveErr(err error) error {
	var me *engine.MoveError
	if errors.As(err, &me) {
		return errors.New(me.Msg)
	}
	return err
}
