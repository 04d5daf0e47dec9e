package datagen

// viriformat: the game-based binary format of Viridithas' datagen, which
// bullet reads (its viribinpack loader, through the viriformat crate) and
// recommends. The definition followed here is Viridithas'
// src/datagen/dataformat.rs (Game::serialise_into) and
// src/datagen/dataformat/marlinformat.rs (PackedBoard), with Move from
// src/chess/chessmove.rs; bullet's crates/bullet_lib/src/value/loader/
// viribinpack.rs reads it through the same crate (viriformat 2.0.1).
//
// A file is a sequence of games, all integers little-endian:
//
//	game   = board (32 bytes) | (move u16, eval i16)* | 00 00 00 00
//	board  = bytes  0-7   occupancy: bit i = square i (a1 = 0, h8 = 63),
//	                      White at the bottom whoever moves (no flipping)
//	         bytes  8-23  4 bits a piece in the order of occupancy's set
//	                      bits, low nibble first: type (P0 N1 B2 R3 Q4 K5,
//	                      6 a rook that still castles) | 8 for Black
//	         byte  24     side to move << 7 | en-passant square (64: none)
//	         byte  25     halfmove clock
//	         bytes 26-27  fullmove number (u16)
//	         bytes 28-29  eval (i16): unused in a game's board, 0
//	         byte  30     result: 2 White won, 1 draw, 0 Black won
//	         byte  31     extra: 0
//	move   = from | to << 6 | promotion << 12 | flag << 14, promotion
//	         0 N 1 B 2 R 3 Q, flag 1 en passant, 2 castling (to is the
//	         castling rook's square: king takes rook), 3 promotion
//	eval   = the score of the position before the move, White's view
//
// The positions of a game are its board and the position after each
// move but the last, each with the eval of the move played from it.
//
// How Arbiter maps its records onto games (the choice, and why):
// Arbiter's datasets count records (positions that passed the job's
// filters and, unless kept, are not duplicates), and a count must be
// exact. viriformat cannot leave a position out of a game's move chain,
// so a game's records are written as runs: each maximal run of records
// at consecutive plies of one Arbiter game is one viriformat game, whose
// board is the run's first position. Every position in a viriformat
// file is then exactly one record the dataset counted, so "--positions N",
// the filters and duplicate dropping hold as in the other formats. With
// --filters none, --min-ply 0 and duplicates kept, a game is one run from
// its first engine move (the random opening plies are not positions, as
// in Viridithas, where the board is the position after them).

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
)

// Sizes of viriformat's parts.
const (
	ViriBoardSize = 32 // a game's packed board
	ViriMoveSize  = 4  // a (move, eval) pair, and the terminator
)

// Codes of viriformat's packed board and moves.
const (
	viriUnmovedRook = 6 // piece type code of a rook that still castles
	viriBlackBit    = 8 // piece code bit of a Black piece
	viriNoEP        = 64
	viriFlagEP      = 1 << 14
	viriFlagCastle  = 2 << 14
	viriFlagPromo   = 3 << 14
	viriFlagMask    = 3 << 14
)

// viriResult is byte 30 of the board: White's half points.
func viriResult(r Result) byte { return byte(r.halfPoints()) }

// AppendViri appends the records recs of game g (in game order, from
// Records) as viriformat games, one for each run of records at
// consecutive plies (see the top of this file).
func AppendViri(dst []byte, g Game, recs []Record) ([]byte, error) {
	for start := 0; start < len(recs); {
		end := start + 1
		for end < len(recs) && recs[end].Ply == recs[end-1].Ply+1 {
			end++
		}
		var err error
		if dst, err = appendViriRun(dst, g, recs[start:end]); err != nil {
			return dst, err
		}
		start = end
	}
	return dst, nil
}

// appendViriRun writes one viriformat game: run's first position, then
// the move played from each record's position with its score.
func appendViriRun(dst []byte, g Game, run []Record) ([]byte, error) {
	pos, err := engine.ParseFEN(run[0].FEN)
	if err != nil {
		return dst, err
	}
	if dst, err = appendViriBoard(dst, &pos, viriResult(g.Result)); err != nil {
		return dst, fmt.Errorf("ply %d: %v", run[0].Ply, err)
	}
	for _, r := range run {
		if r.Ply < 0 || r.Ply >= len(g.Moves) {
			return dst, fmt.Errorf("record at ply %d of a game of %d plies", r.Ply, len(g.Moves))
		}
		if r.Score < -32768 || r.Score > 32767 {
			return dst, fmt.Errorf("ply %d: score %d does not fit viriformat's i16", r.Ply, r.Score)
		}
		m, err := pos.ParseUCIMove(g.Moves[r.Ply].UCI)
		if err != nil {
			return dst, fmt.Errorf("ply %d: %v", r.Ply, err)
		}
		dst = binary.LittleEndian.AppendUint16(dst, viriMove(m))
		dst = binary.LittleEndian.AppendUint16(dst, uint16(int16(r.Score)))
		pos.MakeMove(m)
	}
	return append(dst, 0, 0, 0, 0), nil
}

// viriMove is m in viriformat's encoding. Arbiter's engine keeps from and
// to (castling as king takes rook) and the promotion piece in the same
// bits; only the kind bits differ.
func viriMove(m engine.Move) uint16 {
	v := uint16(m.From()) | uint16(m.To())<<6
	switch {
	case m.IsPromotion():
		v |= uint16(m.Promotion()-engine.Knight)<<12 | viriFlagPromo
	case m.IsEnPassant():
		v |= viriFlagEP
	case m.IsCastle():
		v |= viriFlagCastle
	}
	return v
}

// appendViriBoard appends pos as a packed board with result wdl and eval 0.
func appendViriBoard(dst []byte, pos *engine.Position, wdl byte) ([]byte, error) {
	if pos.HalfmoveClock() > 255 || pos.FullmoveNumber() > 65535 {
		return dst, fmt.Errorf("move counters %d %d do not fit viriformat's u8 and u16", pos.HalfmoveClock(), pos.FullmoveNumber())
	}
	castlingRooks := castlingRookSquares(pos)
	var occ uint64
	var pcs [16]byte
	n := 0
	for sq := engine.Square(0); sq < 64; sq++ {
		pc := pos.PieceAt(sq)
		if pc == engine.NoPiece {
			continue
		}
		code := byte(pc.Type() - engine.Pawn)
		if castlingRooks&(1<<sq) != 0 {
			code = viriUnmovedRook
		}
		if pc.Color() == engine.Black {
			code |= viriBlackBit
		}
		occ |= 1 << sq
		pcs[n/2] |= code << (4 * (n & 1))
		n++
	}
	ep := byte(viriNoEP)
	if pos.EnPassant() != engine.NoSquare {
		ep = byte(pos.EnPassant())
	}
	dst = binary.LittleEndian.AppendUint64(dst, occ)
	dst = append(dst, pcs[:]...)
	dst = append(dst, byte(pos.SideToMove())<<7|ep, byte(pos.HalfmoveClock()))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(pos.FullmoveNumber()))
	dst = binary.LittleEndian.AppendUint16(dst, 0)
	return append(dst, wdl, 0), nil
}

// castlingRookSquares are the squares of the rooks that pos's castling
// rights castle with, read from the position's Shredder-FEN castling
// field (a right's letter is its rook's file), the one place the engine
// names them for standard chess and Chess960 alike.
func castlingRookSquares(pos *engine.Position) uint64 {
	if pos.CastlingRights() == 0 {
		return 0
	}
	shredder := *pos
	shredder.SetChess960(true)
	fields := strings.Fields(shredder.FEN())
	var rooks uint64
	for _, c := range fields[2] {
		switch {
		case c >= 'A' && c <= 'H':
			rooks |= 1 << (c - 'A')
		case c >= 'a' && c <= 'h':
			rooks |= 1 << (56 + c - 'a')
		}
	}
	return rooks
}
