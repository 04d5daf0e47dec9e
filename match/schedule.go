package match

import (
	"fmt"
	"strconv"
)

// Kind is the shape of a tournament.
type Kind string

const (
	// RoundRobin: every engine meets every other.
	RoundRobin Kind = "roundrobin"
	// Gauntlet: the seeds (the first engines) meet every other engine;
	// the others do not meet each other.
	Gauntlet Kind = "gauntlet"
)

// maxScheduled bounds a finite schedule, so that game indices, the state
// file's result string and every count stay far from overflow.
const maxScheduled = 1 << 30

// Schedule is the fixed order of a tournament's games, fastchess's: round
// after round; within a round every pairing in turn (engine i against
// engine j, i < j, in order) plays Games games; the games of a pairing
// share an opening Repeat at a time (a unit), one new opening per unit, in
// the order the units come; within a pairing colours alternate, the
// pairing's first engine white in its even games.
//
// Everything about a game (engines, colours, opening, Round tag) follows
// from its index, so a tournament can be resumed, or cut into pieces,
// anywhere. With Repeat 2 the units are game pairs: one opening, colours
// swapped, the pentanomial's unit.
type Schedule struct {
	Kind   Kind
	Seeds  int // gauntlet: how many of the first engines are seeds
	Rounds int // 0: no end (the runner is stopped, e.g. by an SPRT)
	Games  int // games per pairing and round
	Repeat int // games per opening
	// NoSwap keeps the pairing's first engine white in every game
	// (fastchess's and cutechess-cli's -noswap); Reverse gives it black
	// where it would have white (-reverse). Units are then not game pairs
	// (Paired) under NoSwap.
	NoSwap, Reverse bool

	engines  int
	pairings [][2]int
}

// ScheduledGame is one game of a schedule.
type ScheduledGame struct {
	Index        int // position in the schedule, from 0
	Round        int // from 0
	InRound      int // position within the round, from 0
	Pairing      int // index in Pairings
	White, Black int // engine indices
	// Unit is the opening sequence number: the games of a unit share the
	// opening Openings(Unit) and are played one after the other by one
	// slot.
	Unit int
}

// RoundTag is the PGN Round tag: "round.game", both from 1.
func (g ScheduledGame) RoundTag() string {
	return strconv.Itoa(g.Round+1) + "." + strconv.Itoa(g.InRound+1)
}

// NewSchedule checks a tournament's shape. Seeds (gauntlet only) defaults
// to 1, Games to 2, and Repeat to Games when Games is 1 or 2, else to 2
// when Games is even (game pairs), else 1.
func NewSchedule(engines int, kind Kind, seeds, rounds, games, repeat int) (*Schedule, error) {
	s := &Schedule{Kind: kind, Seeds: seeds, Rounds: rounds, Games: games, Repeat: repeat, engines: engines}
	if s.Kind == "" {
		s.Kind = RoundRobin
	}
	if s.Games == 0 {
		s.Games = 2
	}
	if s.Repeat == 0 {
		switch {
		case s.Games <= 2:
			s.Repeat = s.Games
		case s.Games%2 == 0:
			s.Repeat = 2
		default:
			s.Repeat = 1
		}
	}
	switch {
	case engines < 2:
		return nil, fmt.Errorf("a tournament needs at least two engines (got %d)", engines)
	case engines > 1000:
		return nil, fmt.Errorf("%d engines: at most 1000", engines)
	case s.Rounds < 0:
		return nil, fmt.Errorf("rounds %d: negative", s.Rounds)
	case s.Games < 1:
		return nil, fmt.Errorf("games %d: want at least 1 per pairing and round", s.Games)
	case s.Repeat < 1:
		return nil, fmt.Errorf("repeat %d: want at least 1 game per opening", s.Repeat)
	case s.Games%s.Repeat != 0:
		return nil, fmt.Errorf("games %d with repeat %d: the games of a pairing in a round must use whole openings (games a multiple of repeat)", s.Games, s.Repeat)
	}
	switch s.Kind {
	case RoundRobin:
		if seeds != 0 {
			return nil, fmt.Errorf("seeds %d: seeds are for a gauntlet, not a round-robin", seeds)
		}
		s.Seeds = 0
		for i := 0; i < engines; i++ {
			for j := i + 1; j < engines; j++ {
				s.pairings = append(s.pairings, [2]int{i, j})
			}
		}
	case Gauntlet:
		if s.Seeds == 0 {
			s.Seeds = 1
		}
		if s.Seeds < 1 || s.Seeds >= engines {
			return nil, fmt.Errorf("seeds %d: want 1..%d (fewer than the %d engines)", s.Seeds, engines-1, engines)
		}
		for i := 0; i < s.Seeds; i++ {
			for j := i + 1; j < engines; j++ {
				s.pairings = append(s.pairings, [2]int{i, j})
			}
		}
	default:
		return nil, fmt.Errorf("tournament %q: want %s or %s", s.Kind, RoundRobin, Gauntlet)
	}
	perRound := len(s.pairings) * s.Games
	if perRound > maxScheduled || (s.Rounds > 0 && s.Rounds > maxScheduled/perRound) {
		return nil, fmt.Errorf("%d rounds of %d games: more than %d games", s.Rounds, perRound, maxScheduled)
	}
	return s, nil
}

// Engines is the number of engines.
func (s *Schedule) Engines() int { return s.engines }

// Pairings lists who meets whom, the pairing's first engine first.
func (s *Schedule) Pairings() [][2]int { return s.pairings }

// PerRound is the number of games in a round.
func (s *Schedule) PerRound() int { return len(s.pairings) * s.Games }

// Len is the number of games, -1 for a schedule without end.
func (s *Schedule) Len() int {
	if s.Rounds == 0 {
		return -1
	}
	return s.Rounds * s.PerRound()
}

// Paired reports whether the units are game pairs (one opening, colours
// swapped) that a pentanomial counts: game 2t and 2t+1 form a pair.
func (s *Schedule) Paired() bool { return s.Repeat%2 == 0 && !s.NoSwap }

// Game describes game k (0 <= k, and k < Len() when the schedule ends).
func (s *Schedule) Game(k int) ScheduledGame {
	per := s.PerRound()
	r, rem := k/per, k%per
	p, g := rem/s.Games, rem%s.Games
	a, b := s.pairings[p][0], s.pairings[p][1]
	if ((r*s.Games+g)%2 == 1 && !s.NoSwap) != s.Reverse {
		a, b = b, a
	}
	return ScheduledGame{Index: k, Round: r, InRound: rem, Pairing: p, White: a, Black: b, Unit: k / s.Repeat}
}

// PairingGame describes the i-th game (from 0, across rounds) of pairing
// p: what a pairing played on its own (a cluster tournament's test per
// pairing) is in the schedule.
func (s *Schedule) PairingGame(p, i int) ScheduledGame {
	return s.Game(i/s.Games*s.PerRound() + p*s.Games + i%s.Games)
}

// Same reports whether o is the same schedule (a state file's against the
// tournament that resumes it).
func (s *Schedule) Same(o *Schedule) bool {
	return s.Kind == o.Kind && s.Seeds == o.Seeds && s.Rounds == o.Rounds && s.Games == o.Games &&
		s.Repeat == o.Repeat && s.engines == o.engines && s.NoSwap == o.NoSwap && s.Reverse == o.Reverse
}

func (s *Schedule) String() string {
	str := fmt.Sprintf("%s of %d engines", s.Kind, s.engines)
	if s.Kind == Gauntlet && s.Seeds > 1 {
		str += fmt.Sprintf(" (%d seeds)", s.Seeds)
	}
	if s.Rounds > 0 {
		str += fmt.Sprintf(", %d rounds", s.Rounds)
	}
	str += fmt.Sprintf(" of %d games per pairing, %d per opening", s.Games, s.Repeat)
	if s.NoSwap {
		str += ", colours not swapped"
	}
	if s.Reverse {
		str += ", colours reversed"
	}
	return str
}
