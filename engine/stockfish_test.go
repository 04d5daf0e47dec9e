package engine

// Differential test against Stockfish's `go perft`: seeded random legal
// walks (standard chess from the start position, Chess960 from start
// arrays chosen by Scharnagl number, and long walks into endgames with
// promotions, castling rights and en passant), comparing our divide per
// root move with Stockfish's. One Stockfish process serves the whole test.
//
// Needs /usr/games/stockfish (Debian package stockfish; .ci/run installs
// it), or the path in ARBITER_STOCKFISH. Skipped, with a message, only if
// it is absent.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

func stockfishPath() string {
	if p := os.Getenv("ARBITER_STOCKFISH"); p != "" {
		return p
	}
	return "/usr/games/stockfish"
}

// stockfish drives one Stockfish process over UCI.
type stockfish struct {
	t        testing.TB
	cmd      *exec.Cmd
	in       io.WriteCloser
	lines    chan string
	chess960 bool
}

func startStockfish(t testing.TB) *stockfish {
	t.Helper()
	path := stockfishPath()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("Stockfish not found at %s (install the Debian package stockfish, or set ARBITER_STOCKFISH): %v", path, err)
	}
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	sf := &stockfish{t: t, cmd: cmd, in: in, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			sf.lines <- sc.Text()
		}
		close(sf.lines)
	}()
	t.Cleanup(func() {
		fmt.Fprintln(in, "quit")
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	sf.send("uci")
	sf.waitFor("uciok")
	sf.send("setoption name Threads value 1")
	sf.send("setoption name UCI_Chess960 value false")
	sf.send("isready")
	sf.waitFor("readyok")
	return sf
}

func (sf *stockfish) send(s string) {
	if _, err := fmt.Fprintln(sf.in, s); err != nil {
		sf.t.Fatalf("stockfish: write %q: %v", s, err)
	}
}

func (sf *stockfish) readLine() string {
	select {
	case l, ok := <-sf.lines:
		if !ok {
			sf.t.Fatal("stockfish exited")
		}
		return l
	case <-time.After(60 * time.Second):
		sf.t.Fatal("stockfish: no answer within 60s")
	}
	return ""
}

func (sf *stockfish) waitFor(prefix string) {
	for !strings.HasPrefix(sf.readLine(), prefix) {
	}
}

// perft runs `go perft depth` on the position and returns Stockfish's
// divide (UCI move -> count) and total.
func (sf *stockfish) perft(fen string, chess960 bool, depth int) (map[string]uint64, uint64) {
	if chess960 != sf.chess960 {
		sf.send(fmt.Sprintf("setoption name UCI_Chess960 value %v", chess960))
		sf.chess960 = chess960
	}
	sf.send("position fen " + fen)
	sf.send(fmt.Sprintf("go perft %d", depth))
	div := map[string]uint64{}
	for {
		l := strings.TrimSpace(sf.readLine())
		if rest, ok := strings.CutPrefix(l, "Nodes searched:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				sf.t.Fatalf("stockfish: bad line %q", l)
			}
			return div, n
		}
		mv, cnt, ok := strings.Cut(l, ":")
		if !ok || len(mv) < 4 || len(mv) > 5 {
			continue // info lines and the like
		}
		n, err := strconv.ParseUint(strings.TrimSpace(cnt), 10, 64)
		if err != nil {
			continue
		}
		div[mv] = n
	}
}

// ourDivide returns our divide as UCI move -> count, and the total.
func ourDivide(t testing.TB, p Position, depth int) (map[string]uint64, uint64) {
	t.Helper()
	res, err := RunPerft(context.Background(), p, depth, PerftOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	div := map[string]uint64{}
	for _, d := range res.Divide {
		if _, dup := div[d.UCI]; dup {
			t.Errorf("%s: move %s listed twice in divide", p.FEN(), d.UCI)
		}
		div[d.UCI] = d.Nodes.Lo
	}
	return div, res.Nodes.Lo
}

// divideDiff describes how two divides differ ("" if equal).
func divideDiff(ours, theirs map[string]uint64) string {
	var b []string
	keys := map[string]bool{}
	for k := range ours {
		keys[k] = true
	}
	for k := range theirs {
		keys[k] = true
	}
	var all []string
	for k := range keys {
		all = append(all, k)
	}
	sort.Strings(all)
	for _, k := range all {
		o, okO := ours[k]
		s, okS := theirs[k]
		switch {
		case !okO:
			b = append(b, fmt.Sprintf("%s missing (stockfish %d)", k, s))
		case !okS:
			b = append(b, fmt.Sprintf("%s extra (ours %d, not legal for stockfish)", k, o))
		case o != s:
			b = append(b, fmt.Sprintf("%s: ours %d, stockfish %d", k, o, s))
		}
	}
	return strings.Join(b, "; ")
}

// divergence descends from a position where the divides differ to the
// shallowest position whose legal move lists differ, and describes it.
func divergence(t testing.TB, sf *stockfish, p Position, depth int) string {
	path := []string{}
	for ; depth >= 1; depth-- {
		ours, _ := ourDivide(t, p, depth)
		theirs, _ := sf.perft(p.FEN(), p.IsChess960(), depth)
		d := divideDiff(ours, theirs)
		if d == "" {
			return fmt.Sprintf("no difference after %v", path)
		}
		if depth == 1 || len(ours) != len(theirs) || strings.Contains(d, "missing") || strings.Contains(d, "extra") {
			return fmt.Sprintf("at %q (after %v from the test position): %s", p.FEN(), path, d)
		}
		for mv, n := range ours {
			if theirs[mv] != n {
				m, err := p.ParseUCIMove(mv)
				if err != nil {
					return fmt.Sprintf("at %q: our own divide move %s does not parse: %v", p.FEN(), mv, err)
				}
				p.MakeMove(m)
				path = append(path, mv)
				break
			}
		}
	}
	return "no divergence found"
}

// chess960StartFEN returns Chess960 start position number n (0..959) by
// the standard Scharnagl numbering (518 is the standard start position),
// with Shredder-FEN castling letters.
func chess960StartFEN(n int) string {
	var rank [8]byte
	rank[2*(n%4)+1] = 'B' // light-squared bishop: b, d, f, h
	n /= 4
	rank[2*(n%4)] = 'B' // dark-squared bishop: a, c, e, g
	n /= 4
	place := func(k int, pc byte) { // on the k-th empty square
		for f := 0; f < 8; f++ {
			if rank[f] == 0 {
				if k == 0 {
					rank[f] = pc
					return
				}
				k--
			}
		}
	}
	place(n%6, 'Q')
	n /= 6
	knights := [10][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}[n]
	place(knights[1], 'N') // the later square first, so the earlier index stays valid
	place(knights[0], 'N')
	place(0, 'R')
	place(0, 'K')
	place(0, 'R')
	white := string(rank[:])
	black := strings.ToLower(white)
	var rooks []int
	for f := 0; f < 8; f++ {
		if rank[f] == 'R' {
			rooks = append(rooks, f)
		}
	}
	h, a := byte('A'+rooks[1]), byte('A'+rooks[0])
	castling := string([]byte{h, a, h + 32, a + 32})
	return black + "/pppppppp/8/8/8/8/PPPPPPPP/" + white + " w " + castling + " - 0 1"
}

// walkOptions bias a random walk.
type walkOptions struct {
	plies   int  // maximum plies
	endgame bool // prefer captures and pawn moves, to reach endgames
}

// randomWalk plays up to opt.plies random legal moves from p and returns
// every position visited (p first). Deterministic for a given rng.
func randomWalk(p Position, rng *rand.Rand, opt walkOptions) []Position {
	out := []Position{p}
	var ml MoveList
	for ply := 0; ply < opt.plies; ply++ {
		p.GenerateMoves(&ml)
		if ml.N == 0 || p.HalfmoveClock() >= 100 {
			break
		}
		moves := ml.Slice()
		m := moves[rng.IntN(len(moves))]
		if rng.IntN(3) == 0 {
			// Now and then prefer a double push that allows an en-passant
			// reply, so e.p. captures get tested often.
			for _, c := range moves {
				q := p
				q.MakeMove(c)
				if q.EnPassant() != NoSquare {
					m = c
					break
				}
			}
		}
		if opt.endgame && rng.IntN(4) != 0 {
			// Prefer promotions, then captures, then pawn moves.
			best := -1
			for _, c := range moves {
				score := rng.IntN(8)
				switch {
				case c.IsPromotion():
					score += 40
				case p.IsCapture(c):
					score += 20
				case p.PieceAt(c.From()).Type() == Pawn:
					score += 10
				}
				if score > best {
					best, m = score, c
				}
			}
		}
		p.MakeMove(m)
		out = append(out, p)
	}
	return out
}

// interesting reports whether a position exercises a rule worth testing:
// a promotion, a castling move or an en-passant capture is legal, or the
// side to move is in check.
func interesting(p *Position) bool {
	var ml MoveList
	p.GenerateMoves(&ml)
	for _, m := range ml.Slice() {
		if m.IsPromotion() || m.IsCastle() || m.IsEnPassant() {
			return true
		}
	}
	return p.InCheck()
}

// diffPosition is one position of the differential test.
type diffPosition struct {
	kind  string
	pos   Position
	depth int
}

// differentialPositions builds the seeded, reproducible test set.
func differentialPositions(seed uint64) []diffPosition {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var out []diffPosition
	pick := func(kind string, walk []Position, n int, preferInteresting bool) {
		var cand []Position
		if preferInteresting {
			for i := range walk {
				if interesting(&walk[i]) {
					cand = append(cand, walk[i])
				}
			}
		}
		if len(cand) < n {
			cand = append(cand, walk...)
		}
		for i := 0; i < n; i++ {
			p := cand[rng.IntN(len(cand))]
			depth := 3
			if p.LegalMoveCount() > 40 {
				depth = 2
			}
			out = append(out, diffPosition{kind, p, depth})
		}
	}
	start := StartPosition()
	for i := 0; i < 100; i++ {
		pick("standard", randomWalk(start, rng, walkOptions{plies: 10 + rng.IntN(70)}), 2, i%2 == 0)
	}
	for i := 0; i < 300; i++ {
		n := rng.IntN(960)
		p, err := ParseFEN(chess960StartFEN(n))
		if err != nil {
			panic(fmt.Sprintf("Chess960 start %d: %v", n, err))
		}
		p.SetChess960(true)
		pick(fmt.Sprintf("chess960 #%d", n), randomWalk(p, rng, walkOptions{plies: 4 + rng.IntN(40)}), 3, true)
	}
	for i := 0; i < 100; i++ {
		var p Position
		if i%2 == 0 {
			p = StartPosition()
		} else {
			p, _ = ParseFEN(chess960StartFEN(rng.IntN(960)))
			p.SetChess960(true)
		}
		walk := randomWalk(p, rng, walkOptions{plies: 80 + rng.IntN(160), endgame: true})
		pick("endgame", walk[len(walk)/2:], 2, true)
	}
	for len(out) < 2000 {
		if p, ok := castlingStressPosition(rng); ok {
			out = append(out, diffPosition{"castling-stress", p, 3})
		}
	}
	// Standard positions in Chess960 notation too (castling as king takes
	// rook, for both programs).
	n := len(out)
	for i := 0; i < n; i += 5 {
		if !out[i].pos.IsChess960() {
			dp := out[i]
			dp.kind = "standard-in-960-mode"
			dp.pos.SetChess960(true)
			out = append(out, dp)
		}
	}
	return out
}

// castlingStressPosition builds a Chess960 position around castling: a
// random start array with most back-rank pieces and some pawns removed,
// every castling right whose rook is still there, and enemy sliders
// dropped on the back ranks, where they attack the squares castling
// needs (or the squares a castling rook shields). Random walks rarely
// reach these geometries.
func castlingStressPosition(rng *rand.Rand) (Position, bool) {
	start, err := ParseFEN(chess960StartFEN(rng.IntN(960)))
	if err != nil {
		panic(err)
	}
	var board [64]byte
	for s := Square(0); s < 64; s++ {
		if pc := start.PieceAt(s); pc != NoPiece {
			board[s] = pc.Letter()
		}
	}
	for s := Square(0); s < 64; s++ {
		switch c := board[s]; {
		case c == 'P' || c == 'p':
			if rng.IntN(3) == 0 {
				board[s] = 0
			}
		case c != 0 && c != 'K' && c != 'k' && c != 'R' && c != 'r':
			if rng.IntN(3) != 0 {
				board[s] = 0
			}
		}
	}
	for _, rank := range []int{0, 7} {
		enemy := "qrb"
		if rank == 7 {
			enemy = "QRB"
		}
		for k := rng.IntN(3); k > 0; k-- {
			s := MakeSquare(rng.IntN(8), rank)
			if board[s] == 0 {
				board[s] = enemy[rng.IntN(len(enemy))]
			}
		}
	}
	var b strings.Builder
	for rank := 7; rank >= 0; rank-- {
		empty := 0
		for file := 0; file < 8; file++ {
			c := board[MakeSquare(file, rank)]
			if c == 0 {
				empty++
				continue
			}
			if empty > 0 {
				b.WriteByte(byte('0' + empty))
				empty = 0
			}
			b.WriteByte(c)
		}
		if empty > 0 {
			b.WriteByte(byte('0' + empty))
		}
		if rank > 0 {
			b.WriteByte('/')
		}
	}
	var castling []byte
	for _, side := range []struct {
		rank       int
		rook, king byte
		base       byte
	}{{0, 'R', 'K', 'A'}, {7, 'r', 'k', 'a'}} {
		for f := 7; f >= 0; f-- {
			// Only the start array's own rooks: those on the king's sides
			// that were rooks in the start position.
			s := MakeSquare(f, side.rank)
			if board[s] == side.rook && start.PieceAt(s).Type() == Rook {
				castling = append(castling, side.base+byte(f))
			}
		}
	}
	if len(castling) == 0 {
		castling = []byte("-")
	}
	stm := "w"
	if rng.IntN(2) == 1 {
		stm = "b"
	}
	p, err := ParseFEN(b.String() + " " + stm + " " + string(castling) + " - 0 1")
	if err != nil {
		return Position{}, false // e.g. the side not to move is in check
	}
	p.SetChess960(true)
	return p, true
}

func TestDifferentialStockfish(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	sf := startStockfish(t)
	positions := differentialPositions(20240601)
	if len(positions) < 300 {
		t.Fatalf("only %d positions", len(positions))
	}
	kinds := map[string]int{}
	var promo, castle, ep int
	failures := 0
	for i, dp := range positions {
		fen := dp.pos.FEN()
		ours, ourTotal := ourDivide(t, dp.pos, dp.depth)
		theirs, theirTotal := sf.perft(fen, dp.pos.IsChess960(), dp.depth)
		k := strings.Fields(dp.kind)[0]
		kinds[k]++
		for _, m := range dp.pos.LegalMoves() {
			switch {
			case m.IsPromotion():
				promo++
			case m.IsCastle():
				castle++
			case m.IsEnPassant():
				ep++
			}
		}
		if d := divideDiff(ours, theirs); d != "" || ourTotal != theirTotal {
			failures++
			t.Errorf("position %d (%s) %q depth %d: total ours %d, stockfish %d\n  %s\n  divergence: %s",
				i, dp.kind, fen, dp.depth, ourTotal, theirTotal, d, divergence(t, sf, dp.pos, dp.depth))
			if failures >= 10 {
				t.Fatal("too many failures")
			}
		}
	}
	t.Logf("%d positions %v; root moves tested: %d promotions, %d castles, %d en passant", len(positions), kinds, promo, castle, ep)
	if promo == 0 || castle == 0 || ep == 0 {
		t.Errorf("the walks reach too few special moves: %d promotions, %d castles, %d en passant", promo, castle, ep)
	}
}

func TestChess960StartFEN(t *testing.T) {
	cases := map[int]string{
		0:   "bbqnnrkr",
		518: "rnbqkbnr",
		959: "rkrnnqbb",
		1:   "bqnbnrkr",
	}
	for n, want := range cases {
		got := strings.Split(chess960StartFEN(n), "/")[0]
		if got != want {
			t.Errorf("Chess960 #%d: %s, want %s", n, got, want)
		}
	}
	seen := map[string]bool{}
	for n := 0; n < 960; n++ {
		fen := chess960StartFEN(n)
		if seen[fen] {
			t.Fatalf("#%d repeats %s", n, fen)
		}
		seen[fen] = true
		p, err := ParseFEN(fen)
		if err != nil {
			t.Fatalf("#%d %s: %v", n, fen, err)
		}
		if n != 518 && !p.IsChess960() {
			t.Errorf("#%d %s: not Chess960", n, fen)
		}
		if n == 518 && Perft(&p, 3) != 8902 {
			t.Errorf("#518 is not the standard start position")
		}
		p.SetChess960(true)
		if got := p.FEN(); got != fen {
			t.Errorf("#%d: FEN round trip %q, want %q", n, got, fen)
		}
	}
}
