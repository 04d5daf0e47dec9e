package datagen

// The viriformat reader, written from the format's definition (the top of
// viriformat.go names the sources) and not from AppendViri: it shares no
// code with the writer, so that a test that writes with one and reads with
// the other checks the layout and not a copy of itself. A file is
// untrusted input: every byte is checked, every move must be legal, and a
// game's length is capped.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// MaxViriMoves caps the moves of one viriformat game the reader accepts:
// far above any game (Viridithas' own reader splits at 512 positions) and
// small enough that a corrupt file cannot make the reader grow without end.
const MaxViriMoves = 1 << 16

// ViriGame is one game of a viriformat file.
type ViriGame struct {
	Offset    int64  // byte offset of the game's board in the file
	StartFEN  string // the board's position
	Result    Result
	Positions []ViriPosition // the board's position and those after each move but the last
}

// ViriPosition is one position of a viriformat game.
type ViriPosition struct {
	FEN   string // full FEN
	Move  string // the move played from it, UCI (castling e1g1 in standard chess)
	Score int    // the eval stored with the move, White's view
}

// ReadViriFile reads the viriformat file at path; an error names the file
// and the byte offset where it is wrong.
func ReadViriFile(path string, fn func(ViriGame) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := ReadViri(fh, fn); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadViri calls fn for every game of a viriformat stream, in order. An
// error in the data names its byte offset; an error of fn is returned
// as it is.
func ReadViri(r io.Reader, fn func(ViriGame) error) error {
	vr := viriReader{r: bufio.NewReaderSize(r, 64<<10)}
	for {
		g, err := vr.game()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(g); err != nil {
			return err
		}
	}
}

// viriReader reads games and keeps the offset of the next byte.
type viriReader struct {
	r   *bufio.Reader
	off int64
}

// viriError is an error in the data at a byte offset.
func viriError(off int64, format string, args ...any) error {
	return fmt.Errorf("byte offset %d: %s", off, fmt.Sprintf(format, args...))
}

// read fills b; what names the part for a truncation error. io.EOF is
// returned only when no byte at all is left and eofOK.
func (vr *viriReader) read(b []byte, what string, eofOK bool) error {
	n, err := io.ReadFull(vr.r, b)
	start := vr.off
	vr.off += int64(n)
	switch {
	case err == io.EOF && eofOK:
		return io.EOF
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return viriError(start, "truncated: %s needs %d bytes, the file ends after %d", what, len(b), n)
	}
	return err
}

// game reads one game: its board, moves and terminator.
func (vr *viriReader) game() (ViriGame, error) {
	var board [ViriBoardSize]byte
	off := vr.off
	if err := vr.read(board[:], "a game's board", true); err != nil {
		return ViriGame{}, err
	}
	pos, res, err := decodeViriBoard(board[:])
	if err != nil {
		return ViriGame{}, viriError(off, "game board: %v", err)
	}
	g := ViriGame{Offset: off, StartFEN: pos.FEN(), Result: res}
	for {
		var pair [ViriMoveSize]byte
		moveOff := vr.off
		if err := vr.read(pair[:], "a move and eval (or the 4-zero-byte end of the game)", false); err != nil {
			return g, err
		}
		raw := binary.LittleEndian.Uint16(pair[0:2])
		eval := int(int16(binary.LittleEndian.Uint16(pair[2:4])))
		if raw == 0 && eval == 0 {
			return g, nil
		}
		if len(g.Positions) == MaxViriMoves {
			return g, viriError(moveOff, "game at byte offset %d: more than %d moves without the end marker", off, MaxViriMoves)
		}
		m, uci, err := decodeViriMove(&pos, raw)
		if err != nil {
			return g, viriError(moveOff, "move %d of the game at byte offset %d: %v", len(g.Positions)+1, off, err)
		}
		g.Positions = append(g.Positions, ViriPosition{FEN: pos.FEN(), Move: uci, Score: eval})
		pos.MakeMove(m)
	}
}

// decodeViriBoard reads a packed board: the position and the game's
// result. The position must be legal (engine.ParseFEN's checks).
func decodeViriBoard(b []byte) (engine.Position, Result, error) {
	occ := binary.LittleEndian.Uint64(b[0:8])
	if n := bits.OnesCount64(occ); n > 32 {
		return engine.Position{}, 0, fmt.Errorf("occupancy %#016x: %d pieces, at most 32", occ, n)
	}
	var board [64]byte // FEN letter a square, 0 empty
	var castleRooks []int
	n := 0
	for o := occ; o != 0; o &= o - 1 {
		sq := bits.TrailingZeros64(o)
		code := (b[8+n/2] >> (4 * (n & 1))) & 15
		n++
		black := code&8 != 0
		kind := code & 7
		switch {
		case kind == 7:
			return engine.Position{}, 0, fmt.Errorf("piece %d (square %s): code %d is no piece", n, squareName(sq), code)
		case kind == 6:
			if backRank := map[bool]int{false: 0, true: 7}[black]; sq/8 != backRank {
				return engine.Position{}, 0, fmt.Errorf("square %s: a castling rook off its first rank", squareName(sq))
			}
			castleRooks = append(castleRooks, sq)
			kind = 3
		}
		letter := "pnbrqk"[kind]
		if !black {
			letter -= 'a' - 'A'
		}
		board[sq] = letter
	}
	stmEP := b[24]
	stm, ep := stmEP>>7, int(stmEP&127)
	epField := "-"
	if ep != viriNoEP {
		if want := map[byte]int{0: 5, 1: 2}[stm]; ep > 63 || ep/8 != want {
			return engine.Position{}, 0, fmt.Errorf("byte 24 = %#02x: en-passant square %d is not on the %s rank", stmEP, ep, map[byte]string{0: "sixth", 1: "third"}[stm])
		}
		epField = squareName(ep)
	}
	if b[30] > 2 {
		return engine.Position{}, 0, fmt.Errorf("result byte %d, want 0, 1 or 2", b[30])
	}
	castling, err := viriCastlingField(board, castleRooks)
	if err != nil {
		return engine.Position{}, 0, err
	}
	fen := placementField(board) + " " + "wb"[stm:stm+1] + " " + castling + " " + epField + " " +
		strconv.Itoa(int(b[25])) + " " + strconv.Itoa(int(binary.LittleEndian.Uint16(b[26:28])))
	pos, err := engine.ParseFEN(fen)
	if err != nil {
		return engine.Position{}, 0, err
	}
	return pos, [3]Result{BlackWins, Draw, WhiteWins}[b[30]], nil
}

// viriCastlingField is the FEN castling field of the castling rooks: K Q
// k q for a rook in its corner with the king on the e-file, the rook's
// file letter (Shredder-FEN) otherwise.
func viriCastlingField(board [64]byte, rooks []int) (string, error) {
	var sb strings.Builder
	for _, sq := range rooks {
		king, rank := byte('K'), sq/8
		if rank == 7 {
			king = 'k'
		}
		kingFile := -1
		for f := range 8 {
			if board[rank*8+f] == king {
				kingFile = f
			}
		}
		if kingFile < 0 {
			return "", fmt.Errorf("square %s: a castling rook without its king on the same rank", squareName(sq))
		}
		letter := byte('A' + sq%8)
		if kingFile == 4 && sq%8 == 7 {
			letter = 'K'
		} else if kingFile == 4 && sq%8 == 0 {
			letter = 'Q'
		}
		if rank == 7 {
			letter += 'a' - 'A'
		}
		sb.WriteByte(letter)
	}
	if sb.Len() == 0 {
		return "-", nil
	}
	return sb.String(), nil
}

// placementField is the FEN placement field of a board of FEN letters
// (0 an empty square): both binary readers build their FEN with it.
func placementField(board [64]byte) string {
	var sb strings.Builder
	for rank := 7; rank >= 0; rank-- {
		empty := 0
		for file := range 8 {
			c := board[rank*8+file]
			if c == 0 {
				empty++
				continue
			}
			if empty > 0 {
				sb.WriteByte(byte('0' + empty))
				empty = 0
			}
			sb.WriteByte(c)
		}
		if empty > 0 {
			sb.WriteByte(byte('0' + empty))
		}
		if rank > 0 {
			sb.WriteByte('/')
		}
	}
	return sb.String()
}

func squareName(sq int) string { return string([]byte{byte('a' + sq%8), byte('1' + sq/8)}) }

// decodeViriMove reads a move of pos: it must be legal, and its flag must
// say what the move is (castling, en passant, promotion, or none).
func decodeViriMove(pos *engine.Position, raw uint16) (engine.Move, string, error) {
	from, to := int(raw&63), int(raw>>6&63)
	promo, flag := int(raw>>12&3), raw&viriFlagMask
	text := squareName(from) + squareName(to)
	if flag == viriFlagPromo {
		text += string("nbrq"[promo])
	} else if promo != 0 {
		return 0, "", fmt.Errorf("%#04x: promotion bits without the promotion flag", raw)
	}
	// ParseUCIMove takes castling as king takes rook, viriformat's form.
	m, err := pos.ParseUCIMove(text)
	if err != nil {
		return 0, "", fmt.Errorf("%#04x (%s): %v", raw, text, err)
	}
	if m.IsCastle() != (flag == viriFlagCastle) || m.IsEnPassant() != (flag == viriFlagEP) {
		return 0, "", fmt.Errorf("%#04x (%s): flag %d does not match the move", raw, text, flag>>14)
	}
	return m, pos.UCIMove(m), nil
}

// readViriRecords calls fn for every position of a viriformat stream as a
// Record: its FEN, eval and the game's result; Ply is the position's
// index in its viriformat game (the file does not keep the game's ply).
func readViriRecords(r io.Reader, fn func(Record) error) error {
	return ReadViri(r, func(g ViriGame) error {
		for i, p := range g.Positions {
			if err := fn(Record{FEN: p.FEN, Score: p.Score, Result: g.Result, Ply: i}); err != nil {
				return err
			}
		}
		return nil
	})
}
