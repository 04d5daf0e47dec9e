package match

import (
	"errors"
	"fmt"
	"strings"
)

// The check before the first game: every engine is asked, once it has
// started and said what it supports (UCI options, xboard features),
// whether it can play what the match will ask of it. A match that would
// only produce abandoned games (an xboard engine without setboard given an
// EPD book, a UCI engine without UCI_Chess960 given Chess960 openings)
// fails there, naming the engine and the reason, instead of reporting an
// Elo made of forfeits.

// Demands is what a match will ask of its engines, known before the
// first game.
type Demands struct {
	// FEN: some opening starts from a position other than the standard
	// start position (a FEN or EPD book): xboard engines need setboard.
	FEN bool
	// Chess960: some opening is a Chess960 position.
	Chess960 bool
}

// demandSample is how many openings demandsOf looks at: a book is
// uniform in practice (an EPD book is all FENs, a PGN book all move
// sequences), and the game loop still refuses a later odd one.
const demandSample = 256

// demandsOf reads the openings first..first+n-1 (at most demandSample of
// them; n < 0: no end known). openings nil is the standard start position.
func demandsOf(openings func(int) Opening, first, n int) Demands {
	var d Demands
	if openings == nil {
		return d
	}
	if n < 0 || n > demandSample {
		n = demandSample
	}
	for i := first; i < first+n; i++ {
		op := openings(i)
		d.FEN = d.FEN || op.FEN != ""
		d.Chess960 = d.Chess960 || op.Chess960
	}
	return d
}

// capable is a player that can tell, before a game, whether it can play
// what the match demands under its limits. Players that support
// everything (the embedded engine) need not implement it.
type capable interface {
	CanPlay(d Demands, l Limits) error
}

// ErrCannotPlay wraps the reason an engine cannot play a match at all.
var ErrCannotPlay = errors.New("cannot play this match")

// checkCapable asks every started player whether it can play d under its
// limits; the error names the engine and the reason.
func checkCapable(players []Player, names []string, limits []Limits, d Demands) error {
	var errs []error
	for i, p := range players {
		c, ok := p.(capable)
		if !ok {
			continue
		}
		if err := c.CanPlay(d, limits[i]); err != nil {
			name := names[i]
			if name == "" {
				name = p.Name()
			}
			errs = append(errs, fmt.Errorf("engine %q %w: %v", name, ErrCannotPlay, err))
		}
	}
	return errors.Join(errs...)
}

// CanPlay implements capable for xboard engines from the features they
// announced: setboard for positions, the fischerandom variant for
// Chess960, nps for a node limit.
func (x *XboardPlayer) CanPlay(d Demands, l Limits) error {
	var why []string
	if d.FEN && x.x.Feature("setboard") != "1" {
		why = append(why, "the openings start from positions (a FEN or EPD book) and it has no setboard (xboard feature setboard=0): give a PGN book of moves from the start position")
	}
	if d.Chess960 && !x.x.Variant("fischerandom") {
		why = append(why, "the openings are Chess960 and it offers no fischerandom variant")
	}
	if l.Nodes > 0 && x.x.Feature("nps") != "1" {
		why = append(why, fmt.Sprintf("nodes=%d asks for a node limit and it cannot search a fixed number of nodes (no xboard feature nps=1): give tc=, st= or depth=", l.Nodes))
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New(strings.Join(why, "; "))
}

// CanPlay implements capable for UCI engines: Chess960 needs the
// UCI_Chess960 option; every UCI engine takes positions and the go
// limits.
func (u *UCIPlayer) CanPlay(d Demands, _ Limits) error {
	if _, ok := u.u.Options.Lookup("UCI_Chess960"); d.Chess960 && !ok {
		return errors.New("the openings are Chess960 and it declares no UCI_Chess960 option")
	}
	return nil
}
