// Package datagen generates NNUE training data: self-play games of one
// engine at a fixed node count from random openings, the positions kept
// from them (FEN, search score, game result), the compact shard in which
// games are stored and checked, and the formats trainers read (bullet's
// text and 32-byte ChessBoard records, PGN with scores).
//
// Every side of DATAGEN uses it: the worker plays a batch with PlayGames
// and encodes it with EncodeShard; the coordinator decodes what a worker
// sent with DecodeShard (which replays every move, so nothing a worker
// claims is trusted) and derives the records with Records; `arbiter
// datagen` does both on one machine. A batch is reproducible from its
// seed and Settings alone.
//
// The package knows the chess engine and the match library (the game
// loop, its rules and adjudication, the Player interface); it knows
// nothing of the wire, the coordinator or the worker.
package datagen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/arbiter-chess/arbiter/engine"
	"github.com/arbiter-chess/arbiter/match"
)

// Settings is everything that decides a batch's games besides the engine
// and the seed. The zero value is invalid (no nodes); start from
// DefaultSettings.
type Settings struct {
	// Nodes is the node limit of every search (UCI `go nodes`), > 0.
	Nodes int

	// Openings: every game starts from the standard position, or from a
	// FEN drawn (by the seed) from Openings when there are any, and then
	// plays a number of uniformly random legal plies drawn from
	// RandomPliesMin..RandomPliesMax. With no openings, RandomPliesMax
	// must be > 0: a deterministic engine would play one game only.
	RandomPliesMin, RandomPliesMax int
	Openings                       []string

	// Chess960 is not supported yet: Validate refuses it.
	Chess960 bool

	Filters      Filters
	Adjudication Adjudication
	// Tablebase adjudicates games by Syzygy tables (tablebase.go); the
	// zero value is off.
	Tablebase Tablebase
}

// Filters decide which positions of a game become records. The random
// opening plies never do (they have no search score).
type Filters struct {
	SkipInCheck  bool // positions whose side to move is in check
	SkipTactical bool // positions whose best move (the one played) is a capture or a promotion
	SkipMates    bool // positions with a mate score (|score| > MateBound)
	// MinPly: positions before this ply (0-based from the game's start
	// position, random plies included) are not kept.
	MinPly int
}

// Adjudication ends games early, as match's adjudication does (fastchess's
// -resign and -draw). Scores are the engine's, in centipawns.
type Adjudication struct {
	// Win: the game is won when the scores say so, |score| ≥ WinScore in
	// the winner's favour, for WinMoves consecutive moves of both sides.
	// WinMoves 0 turns it off.
	WinScore, WinMoves int
	// Draw: from move DrawMoveNumber (counted from the first engine move),
	// |score| ≤ DrawScore for DrawMoves consecutive moves of both sides.
	// DrawMoves 0 turns it off.
	DrawMoveNumber, DrawMoves, DrawScore int
	// MaxMoves: a draw after this many moves of the engine (both sides
	// count one each, random plies excluded). Required (1..MaxMaxMoves):
	// it bounds a game's length, and so a shard's.
	MaxMoves int
}

// match is the game loop's form of a: the runner plays and checks games
// under these thresholds (a win by the scores is its resign adjudication).
func (a Adjudication) match() match.Adjudication {
	return match.Adjudication{
		ResignMoves: a.WinMoves, ResignScore: a.WinScore,
		DrawMoveNumber: a.DrawMoveNumber, DrawMoves: a.DrawMoves, DrawScore: a.DrawScore,
		MaxMoves: a.MaxMoves,
	}
}

// Bounds of the settings (Validate refuses anything outside them). They
// also bound what a shard may hold (DefaultLimits).
const (
	MaxNodes       = 1_000_000_000
	MaxRandomPlies = 100
	MaxOpenings    = 1_000_000
	MaxFENLength   = 128 // a legal FEN is under 100 bytes
	MaxMaxMoves    = 1000
	MaxMinPly      = 1000
)

// DefaultSettings are the defaults of `arbiter datagen` and `arbiter
// submit datagen`: 5000 nodes, 8-9 random plies from the standard
// position (genfens-like), every filter on, and OpenBench's adjudication
// (-resign movecount=3 score=400, -draw movenumber=40 movecount=8
// score=10) with games cut at 400 moves.
func DefaultSettings() Settings {
	return Settings{
		Nodes:          5000,
		RandomPliesMin: 8,
		RandomPliesMax: 9,
		Filters:        Filters{SkipInCheck: true, SkipTactical: true, SkipMates: true},
		Adjudication: Adjudication{
			WinScore: 400, WinMoves: 3,
			DrawMoveNumber: 40, DrawMoves: 8, DrawScore: 10,
			MaxMoves: 400,
		},
	}
}

// Validate reports the first setting that cannot be played. Errors name
// the setting as the command line does ("nodes: must be > 0").
func (s Settings) Validate() error { return s.validate(true) }

// validate is Validate; without allOpenings it does not parse every
// opening: PlayGames parses only the openings it draws, so that a book of
// a million positions is checked once, when the dataset is submitted, and
// not again at every batch.
func (s Settings) validate(allOpenings bool) error {
	if s.Nodes <= 0 || s.Nodes > MaxNodes {
		return fmt.Errorf("nodes: %d: must be > 0 and at most %d", s.Nodes, MaxNodes)
	}
	if s.RandomPliesMin < 0 || s.RandomPliesMax < s.RandomPliesMin || s.RandomPliesMax > MaxRandomPlies {
		return fmt.Errorf("random-plies: %d-%d: want MIN-MAX with 0 <= MIN <= MAX <= %d", s.RandomPliesMin, s.RandomPliesMax, MaxRandomPlies)
	}
	if len(s.Openings) == 0 && s.RandomPliesMax == 0 {
		return errors.New("random-plies: 0-0 without openings: every game would start from the same position (give random plies or openings)")
	}
	if s.Chess960 {
		return errors.New("chess960: not supported by datagen yet")
	}
	if len(s.Openings) > MaxOpenings {
		return fmt.Errorf("openings: %d positions: at most %d", len(s.Openings), MaxOpenings)
	}
	for i, fen := range s.Openings {
		if !allOpenings {
			break
		}
		if _, err := openingPosition(fen); err != nil {
			return fmt.Errorf("openings: position %d: %v", i+1, err)
		}
	}
	if s.Filters.MinPly < 0 || s.Filters.MinPly > MaxMinPly {
		return fmt.Errorf("min-ply: %d: must be between 0 and %d", s.Filters.MinPly, MaxMinPly)
	}
	if err := s.Tablebase.validate(); err != nil {
		return err
	}
	return s.Adjudication.validate()
}

// maxAdjudicationScore bounds the adjudication scores below MateBound, so
// that the stored scores (centipawns clamped to ±MateBound, mates beyond
// it) cross a threshold exactly where the engine's own scores did, and
// CheckBatch can replay the adjudication from them.
const maxAdjudicationScore = 30000

func (a Adjudication) validate() error {
	switch {
	case a.WinMoves < 0 || a.WinMoves > MaxMaxMoves:
		return fmt.Errorf("adjudicate win-moves: %d: must be between 0 (off) and %d", a.WinMoves, MaxMaxMoves)
	case a.WinMoves > 0 && (a.WinScore <= 0 || a.WinScore > maxAdjudicationScore):
		return fmt.Errorf("adjudicate win-score: %d: must be between 1 and %d", a.WinScore, maxAdjudicationScore)
	case a.DrawMoves < 0 || a.DrawMoves > MaxMaxMoves:
		return fmt.Errorf("adjudicate draw-moves: %d: must be between 0 (off) and %d", a.DrawMoves, MaxMaxMoves)
	case a.DrawMoves > 0 && (a.DrawScore < 0 || a.DrawScore > maxAdjudicationScore):
		return fmt.Errorf("adjudicate draw-score: %d: must be between 0 and %d", a.DrawScore, maxAdjudicationScore)
	case a.DrawMoveNumber < 0 || a.DrawMoveNumber > MaxMaxMoves:
		return fmt.Errorf("adjudicate draw-move-number: %d: must be between 0 and %d", a.DrawMoveNumber, MaxMaxMoves)
	case a.MaxMoves <= 0 || a.MaxMoves > MaxMaxMoves:
		return fmt.Errorf("adjudicate max-moves: %d: must be between 1 and %d", a.MaxMoves, MaxMaxMoves)
	}
	return nil
}

// openingPosition parses an opening FEN and checks that a game can start
// from it.
func openingPosition(fen string) (engine.Position, error) {
	if len(fen) > MaxFENLength {
		return engine.Position{}, fmt.Errorf("FEN of %d bytes (at most %d)", len(fen), MaxFENLength)
	}
	pos, err := engine.ParseFEN(strings.TrimSpace(fen))
	if err != nil {
		return pos, err
	}
	if pos.IsChess960() {
		return pos, fmt.Errorf("%q is a Chess960 position (chess960 is not supported by datagen yet)", fen)
	}
	var r replay
	r.reset(pos)
	if _, t := r.status(); t != TermNone {
		return pos, fmt.Errorf("%q: the game is already over (%s)", fen, t)
	}
	return pos, nil
}
