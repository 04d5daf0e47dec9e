package datagen

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/arbiter-chess/arbiter/engine"
)

// A shard is the stored form of a batch of games, from which every output
// format is derived. Layout (version 1):
//
//	magic "ARBDGS" | version byte 1 | DEFLATE stream of the payload
//
// payload:
//
//	uvarint games
//	per game:  uvarint len(StartFEN) | StartFEN | byte Result | byte Termination
//	           | uvarint plies | uvarint random plies (a prefix of the plies)
//	           | per ply: 2 bytes little-endian: from | to<<6 | promotion<<12
//	             (promotion 0 none, 1 n, 2 b, 3 r, 4 q)
//	           | per engine ply: zigzag varint Score | byte Depth
//	uint32 little-endian CRC-32 (IEEE) of everything above in the payload
//
// A move is its squares rather than its index among the legal moves, so
// that a shard does not depend on the order of our move generator.
const (
	shardMagic   = "ARBDGS"
	shardVersion = 1
)

// Limits cap what DecodeShard accepts: a shard comes from a worker, and
// nothing a worker sends becomes an allocation size or a loop bound
// without a cap.
type Limits struct {
	MaxGames int   // games in a shard
	MaxPlies int   // plies in a game
	MaxBytes int64 // decompressed payload
}

// DefaultLimits fit any batch valid Settings can produce: games of at most
// MaxMaxMoves engine moves a side plus MaxRandomPlies, and 100,000 games.
func DefaultLimits() Limits {
	return Limits{MaxGames: 100_000, MaxPlies: 2*MaxMaxMoves + MaxRandomPlies, MaxBytes: 512 << 20}
}

// EncodeShard writes games as a shard. The games must be valid (from
// PlayGames or DecodeShard): EncodeShard checks only what it must to write
// them (move syntax, sizes), DecodeShard checks everything.
func EncodeShard(w io.Writer, games []Game) error {
	if _, err := io.WriteString(w, shardMagic); err != nil {
		return err
	}
	if _, err := w.Write([]byte{shardVersion}); err != nil {
		return err
	}
	zw, err := flate.NewWriter(w, flate.DefaultCompression)
	if err != nil {
		return err
	}
	crc := crc32.NewIEEE()
	bw := bufio.NewWriterSize(io.MultiWriter(zw, crc), 64<<10)
	var buf []byte
	buf = binary.AppendUvarint(buf, uint64(len(games)))
	for gi := range games {
		g := &games[gi]
		if len(g.StartFEN) > MaxFENLength {
			return fmt.Errorf("game %d: start FEN of %d bytes", gi, len(g.StartFEN))
		}
		buf = binary.AppendUvarint(buf, uint64(len(g.StartFEN)))
		buf = append(buf, g.StartFEN...)
		buf = append(buf, byte(g.Result), byte(g.Termination))
		random := 0
		for random < len(g.Moves) && g.Moves[random].Random {
			random++
		}
		buf = binary.AppendUvarint(buf, uint64(len(g.Moves)))
		buf = binary.AppendUvarint(buf, uint64(random))
		for i, m := range g.Moves {
			if m.Random != (i < random) {
				return fmt.Errorf("game %d: ply %d: random plies must come first", gi, i)
			}
			code, err := packMove(m.UCI)
			if err != nil {
				return fmt.Errorf("game %d: ply %d: %v", gi, i, err)
			}
			buf = binary.LittleEndian.AppendUint16(buf, code)
		}
		for _, m := range g.Moves[random:] {
			buf = binary.AppendVarint(buf, int64(m.Score))
			buf = append(buf, byte(max(0, min(m.Depth, maxDepth))))
		}
		if len(buf) >= 32<<10 {
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if _, err := zw.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32())); err != nil {
		return err
	}
	return zw.Close()
}

// packMove is a UCI move's 16-bit form.
func packMove(uci string) (uint16, error) {
	if len(uci) != 4 && len(uci) != 5 {
		return 0, fmt.Errorf("move %q is not UCI notation", uci)
	}
	sq := func(f, r byte) (uint16, bool) {
		if f < 'a' || f > 'h' || r < '1' || r > '8' {
			return 0, false
		}
		return uint16(r-'1')*8 + uint16(f-'a'), true
	}
	from, ok1 := sq(uci[0], uci[1])
	to, ok2 := sq(uci[2], uci[3])
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("move %q is not UCI notation", uci)
	}
	code := from | to<<6
	if len(uci) == 5 {
		i := bytes.IndexByte([]byte("nbrq"), uci[4])
		if i < 0 {
			return 0, fmt.Errorf("move %q: bad promotion piece", uci)
		}
		code |= uint16(i+1) << 12
	}
	return code, nil
}

// unpackMove is packMove's inverse; ok is false for codes packMove never
// makes.
func unpackMove(code uint16) (string, bool) {
	if code>>15 != 0 || (code>>12)&7 > 4 {
		return "", false
	}
	b := make([]byte, 0, 5)
	for _, s := range []uint16{code & 63, (code >> 6) & 63} {
		b = append(b, byte('a'+s%8), byte('1'+s/8))
	}
	if p := (code >> 12) & 7; p > 0 {
		b = append(b, "nbrq"[p-1])
	}
	return string(b), true
}

// ErrShard marks every error of DecodeShard: the shard is refused.
var ErrShard = errors.New("bad shard")

// countingReader counts what has been read and refuses to read past max.
type countingReader struct {
	r   io.ByteReader
	n   int64
	max int64
	crc uint32
}

func (c *countingReader) ReadByte() (byte, error) {
	if c.n >= c.max {
		return 0, fmt.Errorf("more than %d bytes decompressed", c.max)
	}
	b, err := c.r.ReadByte()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	c.n++
	c.crc = crc32.Update(c.crc, crc32.IEEETable, []byte{b})
	return b, nil
}

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		b, err := c.ReadByte()
		if err != nil {
			return i, err
		}
		p[i] = b
	}
	return len(p), nil
}

// DecodeShard reads a shard written by EncodeShard from an untrusted
// source. Every count and size is capped by lim; every game is replayed
// from its StartFEN: a bad FEN, an illegal move, a move played after the
// game was over by the rules, a result or termination that the final
// position contradicts, and a win adjudication against the side the last
// score favours are refused with an error that names the game and ply.
// It never panics. Every error wraps ErrShard.
func DecodeShard(r io.Reader, lim Limits) (games []Game, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w: %v", ErrShard, err)
		}
	}()
	head := make([]byte, len(shardMagic)+1)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	if string(head[:len(shardMagic)]) != shardMagic {
		return nil, errors.New("not a datagen shard (bad magic)")
	}
	if head[len(shardMagic)] != shardVersion {
		return nil, fmt.Errorf("version %d (this program reads version %d)", head[len(shardMagic)], shardVersion)
	}
	zr := flate.NewReader(r)
	defer zr.Close()
	cr := &countingReader{r: bufio.NewReader(zr), max: lim.MaxBytes}

	n, err := binary.ReadUvarint(cr)
	if err != nil {
		return nil, fmt.Errorf("game count: %v", err)
	}
	if n > uint64(lim.MaxGames) {
		return nil, fmt.Errorf("%d games: at most %d", n, lim.MaxGames)
	}
	games = make([]Game, 0, min(n, 4096))
	var rp replay
	for gi := 0; gi < int(n); gi++ {
		g, err := decodeGame(cr, lim, &rp)
		if err != nil {
			return nil, fmt.Errorf("game %d: %v", gi, err)
		}
		games = append(games, g)
	}
	sum := cr.crc
	var tail [4]byte
	if _, err := io.ReadFull(cr, tail[:]); err != nil {
		return nil, fmt.Errorf("checksum: %v", err)
	}
	if binary.LittleEndian.Uint32(tail[:]) != sum {
		return nil, errors.New("checksum mismatch: the shard is corrupt")
	}
	// The stream must end here, and end cleanly (a truncated DEFLATE
	// stream reads as io.ErrUnexpectedEOF).
	if _, err := cr.r.ReadByte(); err != io.EOF {
		if err == nil {
			return nil, errors.New("data after the checksum")
		}
		return nil, fmt.Errorf("end of the stream: %v", err)
	}
	return games, nil
}

func decodeGame(cr *countingReader, lim Limits, rp *replay) (Game, error) {
	var g Game
	fl, err := binary.ReadUvarint(cr)
	if err != nil {
		return g, fmt.Errorf("start FEN: %v", err)
	}
	if fl > MaxFENLength {
		return g, fmt.Errorf("start FEN of %d bytes: at most %d", fl, MaxFENLength)
	}
	fen := make([]byte, fl)
	if _, err := io.ReadFull(cr, fen); err != nil {
		return g, fmt.Errorf("start FEN: %v", err)
	}
	g.StartFEN = string(fen)
	var rt [2]byte
	if _, err := io.ReadFull(cr, rt[:]); err != nil {
		return g, fmt.Errorf("result: %v", err)
	}
	g.Result, g.Termination = Result(rt[0]), Termination(rt[1])
	if g.Result < WhiteWins || g.Result > BlackWins {
		return g, fmt.Errorf("result code %d", rt[0])
	}
	if g.Termination <= TermNone || g.Termination >= termCount {
		return g, fmt.Errorf("termination code %d", rt[1])
	}
	plies, err := binary.ReadUvarint(cr)
	if err != nil {
		return g, fmt.Errorf("ply count: %v", err)
	}
	if plies > uint64(lim.MaxPlies) {
		return g, fmt.Errorf("%d plies: at most %d", plies, lim.MaxPlies)
	}
	random, err := binary.ReadUvarint(cr)
	if err != nil {
		return g, fmt.Errorf("random ply count: %v", err)
	}
	if random > plies {
		return g, fmt.Errorf("%d random plies of %d", random, plies)
	}
	pos, err := engine.ParseFEN(g.StartFEN)
	if err != nil {
		return g, fmt.Errorf("start FEN: %v", err)
	}
	if pos.IsChess960() {
		return g, fmt.Errorf("start FEN %q is a Chess960 position", g.StartFEN)
	}
	rp.reset(pos)
	g.Moves = make([]Move, plies)
	var code [2]byte
	for i := range g.Moves {
		if _, err := io.ReadFull(cr, code[:]); err != nil {
			return g, fmt.Errorf("ply %d: %v", i, err)
		}
		uci, ok := unpackMove(binary.LittleEndian.Uint16(code[:]))
		if !ok {
			return g, fmt.Errorf("ply %d: bad move code %#04x", i, binary.LittleEndian.Uint16(code[:]))
		}
		if _, t := rp.status(); t != TermNone {
			return g, fmt.Errorf("ply %d: move %s after the game ended (%s)", i, uci, t)
		}
		m, err := rp.pos.ParseUCIMove(uci)
		if err != nil {
			return g, fmt.Errorf("ply %d: illegal move %s in %s", i, uci, rp.pos.FEN())
		}
		g.Moves[i] = Move{UCI: uci, Random: uint64(i) < random}
		rp.push(m)
	}
	for i := int(random); i < len(g.Moves); i++ {
		s, err := binary.ReadVarint(cr)
		if err != nil {
			return g, fmt.Errorf("ply %d: score: %v", i, err)
		}
		if s < -MateScore || s > MateScore {
			return g, fmt.Errorf("ply %d: score %d out of range", i, s)
		}
		d, err := cr.ReadByte()
		if err != nil {
			return g, fmt.Errorf("ply %d: depth: %v", i, err)
		}
		g.Moves[i].Score, g.Moves[i].Depth = int(s), int(d)
	}
	return g, checkEnd(&g, rp, int(random))
}

// checkEnd refuses a result or termination the final position
// contradicts.
func checkEnd(g *Game, rp *replay, random int) error {
	res, t := rp.status()
	if t != TermNone {
		if g.Termination != t || g.Result != res {
			return fmt.Errorf("the final position ends the game by %s (%s), the shard says %s (%s)", t, res, g.Termination, g.Result)
		}
		return nil
	}
	switch g.Termination {
	case TermCheckmate, TermStalemate, TermRepetition, TermFiftyMoves, TermInsufficientMaterial:
		return fmt.Errorf("termination %s, but the final position does not end the game by the rules", g.Termination)
	case TermDrawAdjudication, TermMaxMoves:
		if g.Result != Draw {
			return fmt.Errorf("termination %s with result %s", g.Termination, g.Result)
		}
	case TermResign:
		if g.Result == Draw {
			return errors.New("termination resign with a draw")
		}
	case TermTablebase:
		if len(g.Moves) == random {
			return errors.New("tablebase adjudication without an engine move")
		}
		if err := tablebaseEnd(&rp.pos); err != nil {
			return err
		}
	case TermWinAdjudication:
		if len(g.Moves) == random {
			return errors.New("win adjudication without an engine move")
		}
		last := g.Moves[len(g.Moves)-1].Score
		if g.Result == Draw || (g.Result == WhiteWins) != (last > 0) {
			return fmt.Errorf("win adjudication with result %s, but the last score is %d", g.Result, last)
		}
	}
	return nil
}
