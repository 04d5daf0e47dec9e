package match

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/enginehost/protocol"
)

// Player is one side of a game: a UCI or xboard process, or an in-process
// engine. A Player plays one game at a time and is reused for the next game
// after NewGame. Implementations in this package: UCIPlayer, XboardPlayer;
// the embedded engine's is in match/builtin.
//
// Contract the game loop relies on:
//   - NewGame is called before every game; a player that died in the last
//     game (crash, hang: see the errors below) restarts there.
//   - Think is given the whole game since StartFEN; a stateful protocol sends
//     only what is new. It must return within req.Timeout (the driver kills a
//     process that does not and returns ErrHang).
//   - Elapsed in the reply is measured with the monotonic clock from sending
//     the search command to reading the move.
type Player interface {
	Name() string
	NewGame(ctx context.Context, chess960 bool) error
	Think(ctx context.Context, req *ThinkRequest) (Reply, error)
	// Quit ends the player (the process, if any) and frees its resources.
	Quit() error
}

// ThinkRequest asks for one move. Moves are in UCI long algebraic notation
// (king-takes-rook castling in Chess960) from StartFEN; StartFEN is "" for
// the standard start position. The request is reused by the game loop: a
// player must not keep a reference to Moves past Think.
type ThinkRequest struct {
	StartFEN string
	Moves    []string
	Chess960 bool

	Limits Limits
	// Remaining clock of each side (index: 0 white, 1 black) when Limits has a clock.
	Time      [2]time.Duration
	Inc       [2]time.Duration
	MovesToGo int  // moves until the next time control; 0 = sudden death
	White     bool // the side to move is white
	// Timeout is the hard deadline for the reply: the time the engine may
	// use plus the margin. The game loop computes it.
	Timeout time.Duration

	// OnInfo, when set, is called during Think for every search report
	// that carries a principal variation (multipv 1 only), on the
	// goroutine running Think, before Think returns: report is the search
	// state so far (as Reply.Info, folded up to this report), pvMove the
	// first move of this report's pv as the engine wrote it. UCIPlayer and
	// the embedded engine (match/builtin) call it; XboardPlayer does not.
	// It lets a caller see when the engine settled on its move (the EPD
	// kind's time to solve); the game loop leaves it nil.
	OnInfo func(report Info, pvMove string)
	// OnInfoLine, when set, is called during Think with every info line
	// the engine writes, as written (valid only during the call; UCIPlayer
	// only). fastchess's command line reads its score and PV from these
	// lines as fastchess does (local/fastchesscli).
	OnInfoLine func(line []byte)
}

// Reply is an engine's move with what it said about its search.
type Reply struct {
	Move    string // as the engine sent it (coordinate notation, or SAN from old xboard engines)
	Info    Info
	Elapsed time.Duration
}

// Info is the last search report before the move.
type Info struct {
	HasScore bool
	Score    Score
	Depth    int
	SelDepth int
	Nodes    int64
	Time     time.Duration // as reported by the engine
}

// Score is from the mover's point of view: centipawns, or mate in Mate
// moves (negative: being mated) when Mate != 0.
type Score struct {
	CP   int
	Mate int
}

// MateCP is the centipawn value that adjudication uses for mate scores.
const MateCP = 100000

// Centipawns maps mate scores to ±(MateCP - distance) so that adjudication
// can compare any score with a threshold.
func (s Score) Centipawns() int {
	switch {
	case s.Mate > 0:
		return MateCP - s.Mate
	case s.Mate < 0:
		return -MateCP - s.Mate
	}
	return s.CP
}

// String is the PGN comment form: "+0.31", "-1.05", "+M5", "-M3".
func (s Score) String() string {
	if s.Mate != 0 {
		if s.Mate > 0 {
			return "+M" + strconv.Itoa(s.Mate)
		}
		return "-M" + strconv.Itoa(-s.Mate)
	}
	cp := s.CP
	sign := "+"
	if cp < 0 {
		sign, cp = "-", -cp
	}
	return fmt.Sprintf("%s%d.%02d", sign, cp/100, cp%100)
}

// Errors a Player returns from Think. They decide how the game ends; the
// player is dead after ErrCrash and ErrHang and restarts at NewGame.
var (
	ErrCrash      = protocol.ErrCrash                                        // the process exited or closed its output
	ErrHang       = protocol.ErrHang                                         // no move within the time plus margin
	ErrNoBestmove = protocol.ErrNoMove                                       // `bestmove` without a move, `bestmove (none)`
	ErrResign     = errors.New("engine resigned")                            // xboard `resign`
	ErrProtocol   = errors.New("engine broke the protocol")                  // anything else that ends its game
	ErrStopped    = errors.New("match stopped")                              // the context was cancelled
	ErrStartup    = protocol.ErrStartup                                      // no uciok / feature done / readyok in time
	ErrUnsupport  = errors.New("engine does not support what the test asks") // e.g. no setboard for a FEN opening
)

// BuiltinFactory creates the embedded engine as an in-process Player with
// option overrides (package match/builtin has it). The match library does
// not link the engine: a program that plays `--engine name=X,builtin` hands
// a factory to MatchConfig.Builtin.
type BuiltinFactory func(name string, options map[string]string) (Player, error)
