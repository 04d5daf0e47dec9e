package engine

import (
	"context"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// TestPolyglotKeys checks the published test vectors of the Polyglot book
// format (http://hgm.nubati.net/book_format.html).
func TestPolyglotKeys(t *testing.T) {
	cases := []struct {
		moves string
		fen   string
		key   uint64
	}{
		{"", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 0x463b96181691fc9c},
		{"e2e4", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", 0x823c9b50fd114196},
		{"e2e4 d7d5", "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 2", 0x0756b94461c50fb0},
		{"e2e4 d7d5 e4e5", "rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2", 0x662fafb965db29d4},
		{"e2e4 d7d5 e4e5 f7f5", "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", 0x22a48b5a8e47ff78},
		{"e2e4 d7d5 e4e5 f7f5 e1e2", "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPPKPPP/RNBQ1BNR b kq - 0 3", 0x652a607ca3f242c1},
		{"e2e4 d7d5 e4e5 f7f5 e1e2 e8f7", "rnbq1bnr/ppp1pkpp/8/3pPp2/8/8/PPPPKPPP/RNBQ1BNR w - - 0 4", 0x00fdd303c946bdd9},
		{"a2a4 b7b5 h2h4 b5b4 c2c4", "rnbqkbnr/p1pppppp/8/8/PpP4P/8/1P1PPPP1/RNBQKBNR b KQkq c3 0 3", 0x3c8123ea7b067637},
		{"a2a4 b7b5 h2h4 b5b4 c2c4 b4c3 a1a3", "rnbqkbnr/p1pppppp/8/8/P6P/R1p5/1P1PPPP1/1NBQKBNR b Kkq - 0 4", 0x5c3f9b829b279560},
	}
	for _, c := range cases {
		p := StartPosition()
		for _, mv := range strings.Fields(c.moves) {
			p.MakeMove(mustUCI(t, &p, mv))
		}
		if p.Key() != c.key {
			t.Errorf("after %q: incremental key %016x, want %016x", c.moves, p.Key(), c.key)
		}
		if p.computeKey() != c.key {
			t.Errorf("after %q: recomputed key %016x, want %016x", c.moves, p.computeKey(), c.key)
		}
		q := mustFEN(t, c.fen)
		if q.Key() != c.key {
			t.Errorf("%s: key from FEN %016x, want %016x", c.fen, q.Key(), c.key)
		}
		// The FEN of the test vector names e3 after 1.e4 (Polyglot ignores an
		// e.p. square no pawn can capture on); ours drops it.
		if strings.Fields(p.FEN())[0] != strings.Fields(c.fen)[0] {
			t.Errorf("after %q: FEN %s, want %s", c.moves, p.FEN(), c.fen)
		}
	}
}

// walkPositions returns the positions of seeded random walks, standard and
// Chess960, some biased towards endgames.
func walkPositions(seed uint64, walks int) []Position {
	rng := rand.New(rand.NewPCG(seed, seed^0xabcdef))
	var out []Position
	for i := 0; i < walks; i++ {
		start := StartPosition()
		if i%2 == 1 {
			start, _ = ParseFEN(chess960StartFEN(rng.IntN(960)))
			start.SetChess960(true)
		}
		out = append(out, randomWalk(start, rng, walkOptions{plies: 250, endgame: i%3 != 0})...)
	}
	return out
}

// TestIncrementalKey: the key kept by MakeMove equals the key recomputed
// from scratch and the key of the position parsed from its FEN, on every
// position of random walks.
func TestIncrementalKey(t *testing.T) {
	positions := walkPositions(3, 100)
	for _, p := range positions {
		if k := p.computeKey(); k != p.Key() {
			t.Fatalf("%s: incremental key %016x, recomputed %016x", p.FEN(), p.Key(), k)
		}
		q := mustFEN(t, p.FEN())
		if q.Key() != p.Key() {
			t.Fatalf("%s: incremental key %016x, from FEN %016x", p.FEN(), p.Key(), q.Key())
		}
	}
	// Null moves too.
	for _, p := range positions[:500] {
		if p.InCheck() {
			continue
		}
		p.MakeNullMove()
		if p.computeKey() != p.Key() {
			t.Fatalf("%s: key after null move %016x, recomputed %016x", p.FEN(), p.Key(), p.computeKey())
		}
	}
	t.Logf("%d positions", len(positions))
}

// TestMoveCountAgrees: GenerateMoves and the bulk counter LegalMoveCount
// agree on every position visited (walks, suites and their children).
func TestMoveCountAgrees(t *testing.T) {
	positions := walkPositions(4, 100)
	for _, file := range []string{"perftsuite.epd", "blunder_perft_suite.epd", "ethereal_fischer960.epd"} {
		for _, fen := range suiteFENs(t, file) {
			p := mustFEN(t, fen)
			positions = append(positions, p)
			for _, m := range p.LegalMoves() {
				c := p
				c.MakeMove(m)
				positions = append(positions, c)
			}
		}
	}
	var ml MoveList
	for _, p := range positions {
		p.GenerateMoves(&ml)
		if n := p.LegalMoveCount(); n != ml.N {
			t.Fatalf("%s: GenerateMoves %d moves, LegalMoveCount %d", p.FEN(), ml.N, n)
		}
		for _, m := range ml.Slice() {
			if !p.IsLegal(m) {
				t.Fatalf("%s: generated %s not IsLegal", p.FEN(), p.UCIMove(m))
			}
		}
	}
	t.Logf("%d positions", len(positions))
}

// TestMakeMoveKeepsInvariants: after every move the bitboards, the board
// array and the king squares agree, and the mover's king is not attacked.
func TestMakeMoveKeepsInvariants(t *testing.T) {
	for _, p := range walkPositions(5, 40) {
		for s := Square(0); s < 64; s++ {
			pc := p.PieceAt(s)
			for c := White; c <= Black; c++ {
				for pt := Pawn; pt <= King; pt++ {
					want := pc != NoPiece && pc.Color() == c && pc.Type() == pt
					if p.Pieces(c, pt).Has(s) != want {
						t.Fatalf("%s: bitboards and board disagree on %v", p.FEN(), s)
					}
				}
			}
		}
		for c := White; c <= Black; c++ {
			if p.Pieces(c, King) != p.KingSquare(c).Bit() {
				t.Fatalf("%s: king square of %v wrong", p.FEN(), c)
			}
		}
		if p.AttackedBy(p.KingSquare(p.SideToMove().Other()), p.SideToMove()) {
			t.Fatalf("%s: the side not to move is in check", p.FEN())
		}
	}
}

// TestChess960CastlingRookShield: in Chess960 the castling rook may be what
// shields the king's destination; castling is then illegal. (Found by the
// Stockfish differential test: c8b8 was generated here.)
func TestChess960CastlingRookShield(t *testing.T) {
	cases := []struct {
		fen, move string
		legal     bool
	}{
		// King c8 stays on c8, rook b8 goes to d8: the queen on a8 would give check.
		{"Qrk1r2b/4pp2/1p1pn2p/p3q1p1/6n1/BP2P2P/P1KP4/2RNN1RB b b - 5 16", "c8b8", false},
		// Same without the queen: legal.
		{"1rk1r2b/4pp2/1p1pn2p/p3q1p1/6n1/BP2P2P/P1KP4/2RNN1RB b b - 5 16", "c8b8", true},
		// White king c1 stays, rook b1 goes to d1: the rook on a1 would give check.
		{"4k3/8/8/8/8/8/8/rRK5 w B - 0 1", "c1b1", false},
		{"4k3/8/8/8/8/8/8/1RK5 w B - 0 1", "c1b1", true},
		{"4k3/8/8/8/8/8/8/rR1K4 w B - 0 1", "d1b1", false},
	}
	for _, c := range cases {
		p := mustFEN(t, c.fen)
		p.SetChess960(true)
		m, err := p.ParseUCIMove(c.move)
		if c.legal && (err != nil || !m.IsCastle()) {
			t.Errorf("%s: castling %s should be legal: %v", c.fen, c.move, err)
		}
		if !c.legal && err == nil {
			t.Errorf("%s: castling %s generated, but the king would be in check", c.fen, c.move)
		}
	}
}

func TestCount(t *testing.T) {
	max := ^uint64(0)
	c := CountOf(max).Add(1)
	if c != (Count{Hi: 1, Lo: 0}) {
		t.Errorf("2^64-1 + 1 = %+v", c)
	}
	if c.IsUint64() || !CountOf(max).IsUint64() {
		t.Error("IsUint64 wrong")
	}
	if s := c.String(); s != "18446744073709551616" {
		t.Errorf("2^64 prints %s", s)
	}
	if got := CountOf(max).AddCount(CountOf(max)); got != (Count{Hi: 1, Lo: max - 1}) {
		t.Errorf("(2^64-1)*2 = %+v", got)
	}
	if got := (Count{}).MulAdd(max, max); got.String() != new(big.Int).Mul(new(big.Int).SetUint64(max), new(big.Int).SetUint64(max)).String() {
		t.Errorf("(2^64-1)^2 = %v", got)
	}
	// perft(14) of the start position, 61885021521585529237, as a sum of
	// multiplicity × count the way the coordinator aggregates.
	const p14 = "61885021521585529237"
	want, _ := new(big.Int).SetString(p14, 10)
	rng := rand.New(rand.NewPCG(9, 9))
	var sum Count
	ref := new(big.Int)
	rest := new(big.Int).Set(want)
	for rest.Sign() > 0 {
		a := rng.Uint64() >> 2
		b := uint64(1 + rng.IntN(50))
		prod := new(big.Int).Mul(new(big.Int).SetUint64(a), new(big.Int).SetUint64(b))
		if prod.Cmp(rest) > 0 {
			a, b = rest.Uint64(), 1
			if !rest.IsUint64() {
				a = max
			}
			prod = new(big.Int).SetUint64(a)
		}
		sum = sum.MulAdd(a, b)
		ref.Add(ref, prod)
		rest.Sub(rest, prod)
	}
	if sum.String() != p14 || ref.String() != p14 {
		t.Errorf("sum %v (reference %v), want %s", sum, ref, p14)
	}
	if sum.Big().Cmp(want) != 0 {
		t.Errorf("Big() = %v", sum.Big())
	}
	parsed, ok := ParseCount(p14)
	if !ok || parsed != sum {
		t.Errorf("ParseCount(%s) = %+v, %v; want %+v", p14, parsed, ok, sum)
	}
	if f := parsed.Float(); f < 6.1885e19 || f > 6.1886e19 {
		t.Errorf("Float() = %g", f)
	}
	// perft(15) and the largest 128-bit value.
	for _, s := range []string{"0", "1", "18446744073709551615", "18446744073709551616", "2015099950053364471960", "340282366920938463463374607431768211455"} {
		c, ok := ParseCount(s)
		if !ok || c.String() != s {
			t.Errorf("ParseCount(%s) round trip: %v %v", s, c, ok)
		}
	}
	for _, s := range []string{"", "-1", "abc", "1.5", "340282366920938463463374607431768211456", " 1"} {
		if c, ok := ParseCount(s); ok {
			t.Errorf("ParseCount(%q) accepted as %v", s, c)
		}
	}
	// The CPW table's d14/d15 rows go through the same type.
	for _, row := range readLines(t, "cpw_perft_results_stats.csv")[1:] {
		f := strings.Split(row, ",")
		c, ok := ParseCount(f[3])
		if !ok || c.String() != f[3] {
			t.Errorf("count %s: %v %v", f[3], c, ok)
		}
	}
}

// TestPerftTable: results through a tiny shared table (many collisions and
// replacements), used by many goroutines at once, equal results without a
// table. Short enough for -race.
func TestPerftTable(t *testing.T) {
	type job struct {
		fen   string
		depth int
	}
	jobs := []job{
		{StartFEN, 4},
		{"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3},
		{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5},
		{"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3},
		{"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", 3},
	}
	if !raceEnabled && !testing.Short() {
		jobs[0].depth = 5
		jobs[1].depth = 4
		jobs[2].depth = 6
	}
	want := make([]uint64, len(jobs))
	for i, j := range jobs {
		p := mustFEN(t, j.fen)
		want[i] = Perft(&p, j.depth)
	}
	tab := NewPerftTable(1)
	if tab == nil || tab.SizeBytes() > 1<<20 || tab.SizeBytes() < 1<<19 {
		t.Fatalf("NewPerftTable(1): %d bytes", tab.SizeBytes())
	}
	if NewPerftTable(0) != nil {
		t.Error("NewPerftTable(0) should be nil")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := 0; k < len(jobs); k++ {
				i := (g + k) % len(jobs)
				p := mustFEN(t, jobs[i].fen)
				if got := PerftWithTable(&p, jobs[i].depth, tab); got != want[i] {
					errs <- jobs[i].fen + ": with table " + CountOf(got).String() + ", without " + CountOf(want[i]).String()
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// RunPerft with the shared table and 4 threads, twice (the second run
	// reads what the first stored).
	for run := 0; run < 2; run++ {
		for i, j := range jobs {
			res, err := RunPerft(context.Background(), mustFEN(t, j.fen), j.depth, PerftOptions{Threads: 4, Table: tab})
			if err != nil {
				t.Fatal(err)
			}
			if res.Nodes != CountOf(want[i]) {
				t.Errorf("run %d %s d%d: RunPerft with table %v, want %d", run, j.fen, j.depth, res.Nodes, want[i])
			}
		}
	}
}

func TestRunPerftDivideAndCancel(t *testing.T) {
	p := StartPosition()
	res, err := RunPerft(context.Background(), p, 4, PerftOptions{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Nodes != CountOf(197281) || len(res.Divide) != 20 {
		t.Fatalf("startpos d4: %v nodes, %d root moves", res.Nodes, len(res.Divide))
	}
	for i, d := range res.Divide {
		if i > 0 && res.Divide[i-1].UCI >= d.UCI {
			t.Errorf("divide not in UCI order: %s before %s", res.Divide[i-1].UCI, d.UCI)
		}
		c := p
		c.MakeMove(d.Move)
		if n := Perft(&c, 3); CountOf(n) != d.Nodes || p.UCIMove(d.Move) != d.UCI {
			t.Errorf("divide %s: %v, perft of the child %d", d.UCI, d.Nodes, n)
		}
	}
	// Depth 0 and 1.
	if r, _ := RunPerft(context.Background(), p, 0, PerftOptions{}); r.Nodes != CountOf(1) {
		t.Errorf("depth 0: %v", r.Nodes)
	}
	if r, _ := RunPerft(context.Background(), p, 1, PerftOptions{Stats: true}); r.Nodes != CountOf(20) || r.Stats == nil || r.Stats.Nodes != 20 {
		t.Errorf("depth 1 with stats: %v %+v", r.Nodes, r.Stats)
	}
	// Progress is called and ends at the total.
	var mu sync.Mutex
	var last PerftProgress
	if _, err := RunPerft(context.Background(), p, 5, PerftOptions{Threads: 2, Progress: func(pr PerftProgress) {
		mu.Lock()
		defer mu.Unlock()
		if pr.Done > last.Done {
			last = pr
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if last.Nodes != CountOf(4865609) || last.Done != last.Total || last.Total == 0 {
		t.Errorf("last progress %+v, want 4865609 nodes with every piece done", last)
	}
	// A cancelled context stops the run with its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunPerft(ctx, p, 7, PerftOptions{Threads: 2}); err != context.Canceled {
		t.Errorf("cancelled run: err %v, want context.Canceled", err)
	}
}

// verifiedRuleCases: each position's mate/stalemate status and material
// verdicts, worked out by hand (CanMate follows the engine's documented
// FIDE reading: a lone minor piece "could mate" when the opponent has more
// than a king).
var verifiedRuleCases = []struct {
	fen                        string
	mate, stale, insufficient  bool
	whiteCanMate, blackCanMate bool
}{
	{"rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", true, false, false, true, true}, // fool's mate
	{"7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", false, true, false, true, false},
	{StartFEN, false, false, false, true, true},
	{"8/8/4k3/8/8/3K4/8/8 w - - 0 1", false, false, true, false, false},     // K v K
	{"8/8/4k3/8/8/3K4/8/5B2 w - - 0 1", false, false, true, false, false},   // KB v K
	{"8/8/4k3/8/8/3K4/8/5N2 w - - 0 1", false, false, true, false, false},   // KN v K
	{"8/8/4k3/8/8/3K4/8/4NN2 w - - 0 1", false, false, false, true, false},  // KNN v K
	{"8/8/4k3/8/8/3K4/8/3B1B2 w - - 0 1", false, false, true, false, false}, // two light bishops v K
	{"8/8/4k3/8/8/3K4/8/3BB3 w - - 0 1", false, false, false, true, false},  // bishops of both colours v K
	{"2b5/8/4k3/8/8/3K4/8/5B2 w - - 0 1", false, false, true, true, true},   // KB v KB, one colour
	{"1b6/8/4k3/8/8/3K4/8/5B2 w - - 0 1", false, false, false, true, true},  // KB v KB, opposite colours
	{"8/8/4kn2/8/8/3K4/8/5N2 w - - 0 1", false, false, false, true, true},   // KN v KN
	{"8/8/4k3/8/8/3K4/4P3/8 w - - 0 1", false, false, false, true, false},   // KP v K
	{"8/8/4k3/8/8/3K4/8/R7 w - - 0 1", false, false, false, true, false},    // KR v K
	{"4k3/4Q3/4K3/8/8/8/8/8 b - - 0 1", true, false, false, true, false},    // Qe7#
	{"R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", true, false, false, true, true},   // back-rank mate
	{"2k5/8/8/8/8/8/5PPP/r5K1 w - - 0 1", true, false, false, true, true},   // white back-rank mated
	{"8/8/8/8/8/5k2/5p2/5K2 w - - 0 1", false, true, false, false, true},    // stalemated by a pawn
	{"8/8/8/8/8/2k5/1q6/K7 w - - 0 1", true, false, false, false, true},     // Qb2#
	{"8/8/8/8/8/2k5/2q5/K7 w - - 0 1", false, true, false, false, true},     // Qc2 stalemate
	{"8/8/8/3k4/8/8/8/K5bb w - - 0 1", false, false, false, false, true},    // KBB (both colours) v K
	{"8/8/8/3k4/8/8/8/K4b1b w - - 0 1", false, false, true, false, false},   // KBB (one colour) v K
	{"8/8/8/3k4/8/8/8/KB3b1b w - - 0 1", false, false, true, true, true},    // all bishops light
	{"8/8/8/8/8/8/8/K1k4n w - - 0 1", false, false, true, false, false},     // K v KN
	{"8/8/8/8/8/8/R7/K1k4n w - - 0 1", false, false, false, true, true},     // KR v KN
	{"8/8/8/8/8/8/8/K1k2n1n w - - 0 1", false, false, false, false, true},   // K v KNN
}

func TestRules(t *testing.T) {
	for _, c := range verifiedRuleCases {
		p := mustFEN(t, c.fen)
		if got := p.IsCheckmate(); got != c.mate {
			t.Errorf("%s: IsCheckmate %v, want %v", c.fen, got, c.mate)
		}
		if got := p.IsStalemate(); got != c.stale {
			t.Errorf("%s: IsStalemate %v, want %v", c.fen, got, c.stale)
		}
		if got := p.InsufficientMaterial(); got != c.insufficient {
			t.Errorf("%s: InsufficientMaterial %v, want %v", c.fen, got, c.insufficient)
		}
		if got := p.CanMate(White); got != c.whiteCanMate {
			t.Errorf("%s: CanMate(White) %v, want %v", c.fen, got, c.whiteCanMate)
		}
		if got := p.CanMate(Black); got != c.blackCanMate {
			t.Errorf("%s: CanMate(Black) %v, want %v", c.fen, got, c.blackCanMate)
		}
	}
}

// TestPartialGenerationAgrees: HasLegalMove and ParseUCIMove generate only
// some pieces' moves; both must agree with full generation. Every move a
// piece of the side to move could name (each destination, each promotion
// letter, the king's two-square castling form) is parsed and compared with
// the legal moves that GenerateMoves lists.
func TestPartialGenerationAgrees(t *testing.T) {
	positions := walkPositions(7, 8)
	for _, file := range []string{"perftsuite.epd", "ethereal_fischer960.epd"} {
		for _, fen := range suiteFENs(t, file) {
			positions = append(positions, mustFEN(t, fen))
		}
	}
	for _, c := range verifiedRuleCases {
		positions = append(positions, mustFEN(t, c.fen))
	}
	var ml MoveList
	parsed, none := 0, 0
	for _, p := range positions {
		p.GenerateMoves(&ml)
		if got := p.HasLegalMove(); got != (ml.N > 0) {
			t.Fatalf("%s: HasLegalMove %v with %d legal moves", p.FEN(), got, ml.N)
		}
		if ml.N == 0 {
			none++
		}
		legal := map[string]Move{}
		for _, m := range ml.Slice() {
			legal[p.UCIMove(m)] = m
		}
		for b := p.ColorPieces(p.SideToMove()); b != 0; {
			from := popFirst(&b)
			for to := Square(0); to < 64; to++ {
				promos := []string{"", "q"} // a promotion letter on another move must fail
				if p.PieceAt(from).Type() == Pawn {
					promos = []string{"", "q", "r", "b", "n"}
				}
				for _, promo := range promos {
					s := from.String() + to.String() + promo
					m, err := p.ParseUCIMove(s)
					want, ok := legal[s]
					if !ok && err == nil && m.IsCastle() && p.IsLegal(m) && from == p.KingSquare(p.SideToMove()) {
						// king takes rook: the castling also written as the king's step
						ok, want = true, m
					}
					switch {
					case ok && (err != nil || m != want):
						t.Fatalf("%s: ParseUCIMove(%s) = %s, %v; want %s", p.FEN(), s, p.UCIMove(m), err, s)
					case !ok && err == nil:
						t.Fatalf("%s: ParseUCIMove(%s) accepted %s, not a legal move", p.FEN(), s, p.UCIMove(m))
					}
					if ok {
						parsed++
					}
				}
			}
		}
	}
	if parsed == 0 || none == 0 {
		t.Fatalf("%d moves parsed, %d positions without a move: the test saw nothing", parsed, none)
	}
	t.Logf("%d positions (%d without a move), %d legal moves parsed", len(positions), none, parsed)
}
