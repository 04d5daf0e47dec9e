package search

import (
	"context"
	"fmt"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// BenchDepth is the default depth of the bench. Deep enough that pruning,
// reductions and the TT all matter, shallow enough to run in seconds.
const BenchDepth = 11

// BenchPositions are the bench's positions: openings, middlegames with
// tactics, castling and en-passant corner cases, and endgames (pawn races,
// zugzwang, mates), so that a change anywhere in the search changes the
// total. Never edit them without updating the signature in the tests.
var BenchPositions = []string{
	engine.StartFEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
	"rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
	"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
	"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
	"rnbqkb1r/pp1ppppp/5n2/2p5/2P5/2N5/PP1PPPPP/R1BQKBNR w KQkq - 1 3",
	"r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP2BPPP/R2QKB1R w KQ - 1 8",
	"r2q1rk1/pp1nbppp/2p1pn2/3p4/2PP1B2/2N1PN2/PPQ2PPP/R3KB1R w KQ - 3 9",
	"2rq1rk1/pb1nbppp/1p2pn2/2pp4/2PP4/1PNBPN2/PB3PPP/R2Q1RK1 w - - 0 11",
	"r1b2rk1/2q1bppp/p2p1n2/np2p3/3PP3/5N1P/PPBN1PP1/R1BQR1K1 w - - 1 13",
	"r2qr1k1/1p1b1ppp/p1np1n2/2p1p3/2P1P3/P1NP1NP1/1P3PBP/R2QR1K1 w - - 0 13",
	"3r1rk1/p4ppp/1pq1pn2/2b5/2P5/1P3NP1/PB2QPBP/3R1RK1 b - - 0 17",
	"r1bq1rk1/pppn1ppp/4pn2/3p4/1bPP4/2N1PN2/PP3PPP/R1BQKB1R w KQ - 2 6",
	"2r3k1/pp3ppp/4pn2/q2p4/3P4/P1Q1PN2/1P3PPP/2R3K1 w - - 0 20",
	"6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
	"r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1RK1 w kq - 6 5",
	"r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 0 7",
	"4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
	"r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
	"1r1q1rk1/p1p2ppp/2p1pn2/3p4/2PP4/4P3/P1Q2PPP/1R2KB1R w K - 0 14",
	"8/8/1p1k4/p1p2p2/P1P2P2/1P1K4/8/8 w - - 0 1",
	"8/8/8/3k4/8/8/3K1P2/8 w - - 0 1",
	"8/5k2/8/5P2/5K2/8/8/8 w - - 0 1",
	"6k1/6p1/6K1/8/8/8/8/7R w - - 0 1",
	"8/pp3pk1/2p3p1/4P3/1P3P2/P5P1/5K2/8 w - - 0 35",
	"5rk1/5ppp/4p3/8/3P4/2r5/5PPP/R4RK1 w - - 0 25",
	"8/3k4/8/8/8/2QK4/8/8 w - - 0 1",
	"2kr3r/ppp2ppp/2n5/2b1p3/4P1b1/2NP1N2/PPP2PPP/R1B1KB1R w KQ - 0 9",
	"r4rk1/pp2ppbp/2np1np1/q7/2P1P3/2N1BP2/PP1QN1PP/R3KB1R w KQ - 1 11",
	"8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1",
}

// BenchResult is the outcome of a bench run.
type BenchResult struct {
	Nodes   int64 // the signature: changes only when search behaviour does
	Elapsed time.Duration
}

// NPS is the speed of the run.
func (r BenchResult) NPS() int64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return int64(float64(r.Nodes) / r.Elapsed.Seconds())
}

// Report is the bench's summary as engines print it, readable by every
// testing framework's parser: Stockfish's three lines, which Fishtest's
// worker reads ("Nodes searched" and "Total time (ms)", each split at
// ": ") and the current OpenBench client too ("Nodes searched" and
// "Nodes/second", any punctuation); then one "N nodes M nps" line for the
// older OpenBench client, which reads only the last lines of the output
// and only in the forms "N NODES"/"NODES N" and "N NPS"/"NPS N" (case
// ignored). That line comes last: both OpenBench parsers read from the end.
func (r BenchResult) Report() []string {
	return []string{
		"===========================",
		fmt.Sprintf("Total time (ms) : %d", r.Elapsed.Milliseconds()),
		fmt.Sprintf("Nodes searched  : %d", r.Nodes),
		fmt.Sprintf("Nodes/second    : %d", r.NPS()),
		fmt.Sprintf("%d nodes %d nps", r.Nodes, r.NPS()),
	}
}

// Bench searches every bench position to depth on one thread with a fresh
// 16 MB table (NewGame before each position), so the node total is
// deterministic on every machine. progress, if set, is called after each
// position.
func Bench(depth int, progress func(i int, fen string, nodes int64)) (BenchResult, error) {
	return BenchWith(depth, nil, progress)
}

// BenchWith is Bench with engine options (UseNNUE, EvalFile) on top of the
// bench's own; Hash and Threads stay the bench's. The signature is Bench's
// only with the default evaluation.
func BenchWith(depth int, options map[string]string, progress func(i int, fen string, nodes int64)) (BenchResult, error) {
	if depth <= 0 {
		depth = BenchDepth
	}
	opts := map[string]string{}
	for k, v := range options {
		opts[k] = v
	}
	opts[OptHash], opts[OptThreads] = "16", "1"
	e, err := NewEngine(opts)
	if err != nil {
		return BenchResult{}, err
	}
	var res BenchResult
	for i, fen := range BenchPositions {
		p, err := engine.ParseFEN(fen)
		if err != nil {
			return res, fmt.Errorf("bench position %d: %w", i+1, err)
		}
		e.NewGame()
		start := time.Now()
		_, info := e.Go(context.Background(), p, nil, Limits{Depth: depth})
		res.Elapsed += time.Since(start)
		res.Nodes += info.Nodes
		if progress != nil {
			progress(i, fen, info.Nodes)
		}
	}
	return res, nil
}
