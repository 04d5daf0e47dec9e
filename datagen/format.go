package datagen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

// Format is an output format of a dataset.
type Format uint8

const (
	// FormatText is bullet's text format, one record a line:
	// "<FEN> | <score> | <result>", score White-relative centipawns,
	// result 1.0 / 0.5 / 0.0 from White's point of view.
	FormatText Format = iota + 1
	// FormatBullet is bullet's 32-byte ChessBoard record (bulletformat
	// crate), side-to-move relative: see AppendBullet.
	FormatBullet
	// FormatPGN is every game in PGN, the engine's score and depth after
	// each engine move ({+0.35/12}, the mover's view), random plies
	// marked {book}: what OpenBench's DATAGEN ships.
	FormatPGN
	// FormatViri is Viridithas' viriformat, which bullet reads: games as
	// a packed board and a (move, eval) pair a position, about 4 bytes a
	// position (viriformat.go has the layout and how records map onto
	// its games).
	FormatViri
)

// Formats lists the formats' names, for help texts.
const Formats = "text|bulletformat|viriformat|pgn"

// ParseFormat reads a format name: text, bulletformat (or bullet),
// viriformat (or viri), pgn.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "text", "txt":
		return FormatText, nil
	case "bulletformat", "bullet":
		return FormatBullet, nil
	case "viriformat", "viri":
		return FormatViri, nil
	case "pgn":
		return FormatPGN, nil
	}
	return 0, fmt.Errorf("format %q: unknown (want %s)", s, Formats)
}

func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatBullet:
		return "bulletformat"
	case FormatPGN:
		return "pgn"
	case FormatViri:
		return "viriformat"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// BulletRecordSize is the size of a ChessBoard record.
const BulletRecordSize = 32

// AppendText appends r as one line of bullet's text format.
func AppendText(dst []byte, r Record) []byte {
	dst = append(dst, r.FEN...)
	dst = append(dst, " | "...)
	dst = strconv.AppendInt(dst, int64(r.Score), 10)
	dst = append(dst, " | "...)
	dst = append(dst, r.Result.Text()...)
	return append(dst, '\n')
}

// ParseText reads one line of bullet's text format (without the newline).
// The FEN is checked for legality; the score must fit bullet's i16.
func ParseText(line string) (Record, error) {
	parts := strings.Split(line, "|")
	if len(parts) != 3 {
		return Record{}, fmt.Errorf("%d fields separated by '|', want 3 (FEN | score | result)", len(parts))
	}
	fen := strings.TrimSpace(parts[0])
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return Record{}, err
	}
	score, err := strconv.Atoi(strings.TrimSpace(parts[1]))
	if err != nil || score < -32768 || score > 32767 {
		return Record{}, fmt.Errorf("score %q: want an integer that fits 16 bits", strings.TrimSpace(parts[1]))
	}
	var res Result
	switch strings.TrimSpace(parts[2]) {
	case "1.0", "1", "[1.0]":
		res = WhiteWins
	case "0.5", "1/2", "[0.5]":
		res = Draw
	case "0.0", "0", "[0.0]":
		res = BlackWins
	default:
		return Record{}, fmt.Errorf("result %q: want 1.0, 0.5 or 0.0", strings.TrimSpace(parts[2]))
	}
	return Record{FEN: pos.FEN(), Score: score, Result: res}, nil
}

// AppendBullet appends r as bullet's 32-byte ChessBoard (bulletformat's
// src/chess.rs, what bullet's text-to-binary conversion writes), all
// little-endian:
//
//	bytes  0-7   occ: occupancy, bit i = square i of the board seen by the
//	             side to move (flipped vertically, sq^56, when Black moves)
//	bytes  8-23  pcs: 4 bits a piece in the order of occ's set bits, low
//	             nibble first: type (P0 N1 B2 R3 Q4 K5) | 8 for the side
//	             not to move
//	bytes 24-25  score: i16, the side to move's view
//	byte  26     result: 2 win, 1 draw, 0 loss for the side to move
//	byte  27     ksq: the side to move's king square (its view)
//	byte  28     opp_ksq: the other king's square in its own view
//	bytes 29-31  zero
func AppendBullet(dst []byte, r Record) ([]byte, error) {
	pos, err := engine.ParseFEN(r.FEN)
	if err != nil {
		return dst, err
	}
	if r.Score < -32768 || r.Score > 32767 {
		return dst, fmt.Errorf("score %d does not fit bullet's i16", r.Score)
	}
	stm := pos.SideToMove()
	flip := engine.Square(0)
	score, result := r.Score, r.Result.halfPoints()
	if stm == engine.Black {
		flip, score, result = 56, -score, 2-result
	}
	var occ uint64
	var pcs [16]byte
	var ksq, oppKsq byte
	n := 0
	for v := engine.Square(0); v < 64; v++ {
		pc := pos.PieceAt(v ^ flip)
		if pc == engine.NoPiece {
			continue
		}
		code := byte(pc.Type() - engine.Pawn)
		if pc.Color() != stm {
			code |= 8
		}
		switch code {
		case 5:
			ksq = byte(v)
		case 13:
			oppKsq = byte(v) ^ 56
		}
		occ |= 1 << v
		pcs[n/2] |= code << (4 * (n & 1))
		n++
	}
	dst = binary.LittleEndian.AppendUint64(dst, occ)
	dst = append(dst, pcs[:]...)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(int16(score)))
	return append(dst, byte(result), ksq, oppKsq, 0, 0, 0), nil
}

// DecodeBullet reads one ChessBoard record. A ChessBoard keeps the board
// as the side to move sees it and not which colour that was, nor castling
// rights, en passant or the move counters: the Record is that view, White
// to move ("... w - - 0 1"), its score and result in that view. Records
// that no legal position gives are refused.
func DecodeBullet(b []byte) (Record, error) {
	if len(b) != BulletRecordSize {
		return Record{}, fmt.Errorf("record of %d bytes, want %d", len(b), BulletRecordSize)
	}
	occ := binary.LittleEndian.Uint64(b[0:8])
	if bits.OnesCount64(occ) > 32 {
		return Record{}, fmt.Errorf("%d pieces", bits.OnesCount64(occ))
	}
	if b[26] > 2 {
		return Record{}, fmt.Errorf("result byte %d", b[26])
	}
	var board [64]byte // FEN letters, 0 empty
	var ksq, oppKsq int = -1, -1
	n := 0
	for o := occ; o != 0; o &= o - 1 {
		sq := bits.TrailingZeros64(o)
		code := (b[8+n/2] >> (4 * (n & 1))) & 15
		n++
		if code&7 > 5 {
			return Record{}, fmt.Errorf("piece code %d on square %d", code, sq)
		}
		c := engine.White
		if code&8 != 0 {
			c = engine.Black
		}
		board[sq] = engine.MakePiece(c, engine.PieceType(code&7)+engine.Pawn).Letter()
		switch code {
		case 5:
			ksq = sq
		case 13:
			oppKsq = sq ^ 56
		}
	}
	if ksq != int(b[27]) || oppKsq != int(b[28]) {
		return Record{}, fmt.Errorf("king squares %d/%d do not match the board", b[27], b[28])
	}
	pos, err := engine.ParseFEN(placementField(board) + " w - - 0 1")
	if err != nil {
		return Record{}, err
	}
	res := [3]Result{BlackWins, Draw, WhiteWins}[b[26]]
	return Record{FEN: pos.FEN(), Score: int(int16(binary.LittleEndian.Uint16(b[24:26]))), Result: res}, nil
}

// ReadRecords calls fn for every record of a text, bulletformat or
// viriformat file, in order; an error names the line, record or byte
// offset.
func ReadRecords(r io.Reader, f Format, fn func(Record) error) error {
	switch f {
	case FormatText:
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 4096), 4096)
		for line := 1; sc.Scan(); line++ {
			rec, err := ParseText(sc.Text())
			if err != nil {
				return fmt.Errorf("line %d: %v", line, err)
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
		return sc.Err()
	case FormatBullet:
		br := bufio.NewReaderSize(r, 64<<10)
		var b [BulletRecordSize]byte
		for i := 0; ; i++ {
			if _, err := io.ReadFull(br, b[:]); err != nil {
				if err == io.EOF {
					return nil
				}
				return fmt.Errorf("record %d: %v", i, err)
			}
			rec, err := DecodeBullet(b[:])
			if err != nil {
				return fmt.Errorf("record %d: %v", i, err)
			}
			if err := fn(rec); err != nil {
				return err
			}
		}
	case FormatViri:
		return readViriRecords(r, fn)
	}
	return fmt.Errorf("reading %s is not supported", f)
}

// PGNInfo fills the PGN tags a Game does not know.
type PGNInfo struct {
	Event  string // default "Arbiter datagen"
	Engine string // White and Black (self-play); default "?"
	Round  int    // 0: "?"
}

// AppendPGN appends g as a PGN game. Tags: the seven-tag roster (Date
// unknown: a game is reproducible from its seed, not from a date), SetUp
// and FEN when g does not start from the standard position, PlyCount,
// Termination. Random plies carry {book}; engine moves the engine's score
// from the mover's view and depth, {+0.35/12} or {-M3/20}.
func AppendPGN(dst []byte, g Game, info PGNInfo) ([]byte, error) {
	pos, err := engine.ParseFEN(g.StartFEN)
	if err != nil {
		return dst, err
	}
	if info.Event == "" {
		info.Event = "Arbiter datagen"
	}
	if info.Engine == "" {
		info.Engine = "?"
	}
	round := "?"
	if info.Round > 0 {
		round = strconv.Itoa(info.Round)
	}
	tag := func(k, v string) {
		v = strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v)
		dst = append(dst, '[')
		dst = append(dst, k...)
		dst = append(dst, ` "`...)
		dst = append(dst, v...)
		dst = append(dst, "\"]\n"...)
	}
	tag("Event", info.Event)
	tag("Site", "?")
	tag("Date", "????.??.??")
	tag("Round", round)
	tag("White", info.Engine)
	tag("Black", info.Engine)
	tag("Result", g.Result.String())
	if start := engine.StartPosition(); pos.FEN() != start.FEN() {
		tag("SetUp", "1")
		tag("FEN", g.StartFEN)
	}
	tag("PlyCount", strconv.Itoa(len(g.Moves)))
	term := match.TermAdjudication
	if g.Termination.ByRules() || g.Termination == TermResign {
		term = match.TermNormal
	}
	tag("Termination", term)
	dst = append(dst, '\n')

	col := 0
	word := func(w string) {
		if col > 0 && col+1+len(w) > 79 {
			dst = append(dst, '\n')
			col = 0
		} else if col > 0 {
			dst = append(dst, ' ')
			col++
		}
		dst = append(dst, w...)
		col += len(w)
	}
	num := pos.FullmoveNumber()
	for i, mv := range g.Moves {
		m, err := pos.ParseUCIMove(mv.UCI)
		if err != nil {
			return dst, fmt.Errorf("ply %d: %v", i, err)
		}
		white := pos.SideToMove() == engine.White
		switch {
		case white:
			word(strconv.Itoa(num) + ".")
		case i == 0:
			word(strconv.Itoa(num) + "...")
		}
		word(pos.SAN(m))
		if mv.Random {
			word("{book}")
		} else {
			word("{" + moverScore(mv.Score, pos.SideToMove()).String() + "/" + strconv.Itoa(mv.Depth) + "}")
		}
		pos.MakeMove(m)
		if !white {
			num++
		}
	}
	word("{" + g.Termination.String() + "}")
	word(g.Result.String())
	return append(dst, "\n\n"...), nil
}

// moverScore is a White-relative score as the mover's match.Score.
func moverScore(white int, mover engine.Color) match.Score {
	v := white
	if mover == engine.Black {
		v = -v
	}
	switch {
	case v > MateBound:
		return match.Score{Mate: MateScore - v}
	case v < -MateBound:
		return match.Score{Mate: -(MateScore + v)}
	}
	return match.Score{CP: v}
}

// Writer writes a dataset in one format.
type Writer struct {
	w       *bufio.Writer
	f       Format
	info    PGNInfo
	buf     []byte
	Games   int // games written (PGN) or games records came from
	Records int // records written (text, bulletformat, viriformat)
}

// NewWriter writes format f to w; info names the engine in PGN.
func NewWriter(w io.Writer, f Format, info PGNInfo) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 256<<10), f: f, info: info}
}

// WriteGame writes recs (text, bulletformat, viriformat: recs must be
// g's, from Records) or the whole game g (PGN: recs are ignored, a game
// is never cut).
func (w *Writer) WriteGame(g Game, recs []Record) error {
	w.buf = w.buf[:0]
	var err error
	switch w.f {
	case FormatText:
		for _, r := range recs {
			w.buf = AppendText(w.buf, r)
		}
	case FormatBullet:
		for _, r := range recs {
			if w.buf, err = AppendBullet(w.buf, r); err != nil {
				return err
			}
		}
	case FormatViri:
		if w.buf, err = AppendViri(w.buf, g, recs); err != nil {
			return err
		}
	case FormatPGN:
		w.info.Round = w.Games + 1
		if w.buf, err = AppendPGN(w.buf, g, w.info); err != nil {
			return err
		}
	default:
		return errors.New("datagen: writer without a format")
	}
	w.Games++
	w.Records += len(recs)
	_, err = w.w.Write(w.buf)
	return err
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.w.Flush() }
