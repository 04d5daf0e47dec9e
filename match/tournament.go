package match

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/arbiter-chess/arbiter/sprt"
)

// Tournament invariants:
//   - The schedule fixes every game (engines, colours, opening, Round tag)
//     by its index; results[k] is game k's result ('.' until it is counted).
//     A game is counted once: its unit is dispatched only for its games not
//     yet counted, and a unit is counted only whole (or, when an engine
//     failed without recovery, up to the failure).
//   - Counting a unit means, in order: fold its games into the standings,
//     append them to the PGN, then (at most every StateInterval, and always
//     at the end) write the state with the PGN's length. A resumed
//     tournament cuts the PGN back to that length, so a game is in the PGN
//     once if and only if the state counts it.
//   - Units are counted, written and passed to OnUnit by the goroutine that
//     called Run, one at a time in completion order.

// Tournament is a match between two or more engines: a round-robin or a
// gauntlet, game pairs or single games, to a fixed number of rounds or
// until OnUnit stops it (an SPRT), resumable from its state file.
type Tournament struct {
	Engines  []EngineConfig
	Schedule *Schedule
	Limits   Limits // for every engine that has none of its own
	Game     GameConfig

	// Openings gives the opening of unit i; nil: the standard start
	// position for every game.
	Openings func(i int) Opening
	// Concurrency is the number of units (game pairs) played at once.
	Concurrency int
	// Recover restarts an engine that crashed, hung or could not start a
	// game, and goes on (each restart is an incident); without it the
	// tournament stops after the game the engine failed in (StatusFailed).
	Recover bool
	// PlayAbandoned plays on however many games end abandoned (more than
	// abandonFloor and abandonShare of them stop the tournament failed
	// otherwise): fastchess and cutechess-cli do, and their farms count
	// the games, so their compatibility mode sets it.
	PlayAbandoned bool

	// PGNFile receives every counted game (appended). On resume it is cut
	// back to the length the state recorded. PGN is the alternative for a
	// writer that is not a file (it cannot be cut back).
	PGNFile    string
	PGN        io.Writer
	PGNOptions PGNOptions

	// StateFile, if set, is where the state is written as games are
	// counted (atomically: a whole new file renamed over the old one).
	StateFile string
	// StateConfig is kept verbatim in the state file: the caller's own
	// description of the tournament, enough to run it again.
	StateConfig json.RawMessage
	// StateInterval is the least time between two writes of the state
	// (default 1s); the final state is always written.
	StateInterval time.Duration
	// Resume continues the tournament that this state saved: only its
	// missing games are played.
	Resume *State

	// OnStart is called once the engines have started and are named,
	// before the first game, with the standings resumed or empty.
	OnStart func(s *Standings)
	// OnUnit is called after every counted unit with the standings so
	// far; returning true stops the tournament (StatusStopped).
	OnUnit func(u *UnitResult, s *Standings) (stop bool)
	// OnGameStart and OnGameEnd, when set, are told of each game as it
	// starts and as it ends (before its unit is counted), by its index in
	// the schedule: a runner's "Started game" and "Finished game" lines.
	// They are called from the game slots' goroutines, concurrently.
	OnGameStart func(index int, white, black string)
	OnGameEnd   func(index int, g *GameRecord)

	Builtin   BuiltinFactory
	NewPlayer func(EngineConfig) (Player, error)
}

// UnitResult is a unit the tournament just counted.
type UnitResult struct {
	Unit    int // opening sequence number
	Pairing int
	Opening Opening
	Games   []*GameRecord
}

// Status is how far a tournament got.
type Status string

const (
	StatusRunning     Status = "running"
	StatusComplete    Status = "complete"    // every scheduled game is counted
	StatusStopped     Status = "stopped"     // OnUnit stopped it (an SPRT bound)
	StatusInterrupted Status = "interrupted" // the context ended (Ctrl-C): resume it
	StatusFailed      Status = "failed"      // an engine failed and Recover is off
)

// Standings are a tournament's counts.
type Standings struct {
	Engines  []string
	Schedule *Schedule
	// Pairings follow Schedule.Pairings(), counts from A's side.
	Pairings []PairingResult
	// Tally counts every counted game, over every session of a resumed
	// tournament, except Incidents: this session's only.
	Tally
	Status Status
	// Failure says which engine failed how (StatusFailed).
	Failure string
	// TooManyAbandoned: the failure is the bound on abandoned games
	// (restarting the engine, --recover, would not help).
	TooManyAbandoned bool
	// NextGame is the first game not counted yet.
	NextGame int
}

// PairingResult is what engine A scored against engine B.
type PairingResult struct {
	A, B                int
	Wins, Draws, Losses int64
	// Penta counts A's game pairs (one opening, colours swapped) by
	// points, when the schedule plays pairs and both games are counted.
	Penta sprt.Pentanomial
}

// Run plays the tournament. It returns an error, having played nothing,
// when it cannot start: a bad schedule, an engine that does not start or
// refuses an option, duplicate names, a state that does not match, a PGN
// or state file that cannot be written. Everything after that is in the
// standings: Status says whether the tournament is complete.
func (t *Tournament) Run(ctx context.Context) (*Standings, error) {
	s := t.Schedule
	if s == nil {
		return nil, errors.New("tournament: no schedule")
	}
	if len(t.Engines) != s.Engines() {
		return nil, fmt.Errorf("tournament: %d engines for a schedule of %d", len(t.Engines), s.Engines())
	}
	lim, err := effectiveLimits(t.Engines, t.Limits)
	if err != nil {
		return nil, err
	}
	if err := explicitNamesUnique(t.Engines); err != nil {
		return nil, err
	}
	if t.Resume != nil {
		if err := t.Resume.matches(s); err != nil {
			return nil, err
		}
	}
	newPlayer := t.NewPlayer
	if newPlayer == nil {
		newPlayer = func(e EngineConfig) (Player, error) { return NewPlayer(e, t.Builtin) }
	}
	l := &lineup{configs: t.Engines, limits: lim, newPlayer: newPlayer, game: &t.Game, recover: t.Recover,
		onStart: t.OnGameStart, onEnd: t.OnGameEnd}
	first, err := l.startPlayers()
	if err != nil {
		return nil, err
	}
	started := false
	defer func() {
		if !started {
			quitPlayers(first)
		}
	}()
	l.names = engineNames(t.Engines, first)
	nUnits := -1
	if n := s.Len(); n >= 0 {
		nUnits = (n + s.Repeat - 1) / max(s.Repeat, 1)
	}
	if err := checkCapable(first, l.names, lim, demandsOf(t.Openings, 0, nUnits)); err != nil {
		return nil, err
	}
	run := &tournamentRun{t: t, s: s, st: newStandings(l.names, s), start: time.Now()}
	if t.Resume != nil {
		if err := run.resume(t.Resume); err != nil {
			return nil, err
		}
	}
	run.resumed = append([]byte(nil), run.results...)
	if err := run.openPGN(); err != nil {
		return nil, err
	}
	defer run.closePGN()
	if err := run.save(true); err != nil {
		return nil, err
	}
	if t.OnStart != nil {
		t.OnStart(run.st)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conc := max(t.Concurrency, 1)
	if n := run.unitsLeft(); n >= 0 {
		conc = min(conc, max(n, 1))
	}
	units := make(chan *unitResult, conc)
	started = true
	l.playUnits(ctx, conc, first, run.nextUnit, units)
	for ur := range units {
		if run.st.Status != StatusRunning {
			continue // stopped: drain what the slots still send
		}
		if err := run.count(ur); err != nil {
			run.st.Status, run.st.Failure = StatusFailed, err.Error()
			cancel()
			continue
		}
		switch {
		case ur.failed:
			run.st.Status, run.st.Failure = StatusFailed, ur.failure()
			cancel()
		case !t.PlayAbandoned && run.st.tooManyAbandoned():
			run.st.Status, run.st.Failure, run.st.TooManyAbandoned = StatusFailed, run.st.abandonedFailure(ur), true
			cancel()
		case t.OnUnit != nil && t.OnUnit(run.unitResult(ur), run.st):
			run.st.Status = StatusStopped
			cancel()
		}
	}
	if run.st.Status == StatusRunning {
		switch {
		case s.Len() >= 0 && run.st.Games == s.Len():
			run.st.Status = StatusComplete
		default:
			run.st.Status = StatusInterrupted
		}
	}
	run.st.Elapsed = run.elapsed()
	if err := run.save(true); err != nil {
		return run.st, err
	}
	return run.st, nil
}

// explicitNamesUnique refuses two engines given the same name.
func explicitNamesUnique(engines []EngineConfig) error {
	seen := map[string]int{}
	for i, e := range engines {
		if e.Name == "" {
			continue
		}
		if j, ok := seen[e.Name]; ok {
			return fmt.Errorf("engines %d and %d are both named %q: give them different names", j+1, i+1, e.Name)
		}
		seen[e.Name] = i
	}
	return nil
}

// engineID is what an engine calls itself (UCI `id name`, xboard
// `myname`), for players that say.
type engineID interface{ EngineID() string }

// engineAuthor is who an engine says wrote it (UCI `id author`), for
// players that say.
type engineAuthor interface{ EngineAuthor() string }

// engineIDOf is what p's engine calls itself (zero for a player that
// does not say, or none).
func engineIDOf(p Player) EngineID {
	var id EngineID
	if n, ok := p.(engineID); ok {
		id.Name = n.EngineID()
	}
	if a, ok := p.(engineAuthor); ok {
		id.Author = a.EngineAuthor()
	}
	return id
}

// engineNames are the engines' names: those given, and for the others what
// the engine calls itself (else its program's file name), made unique with
// " (2)", " (3)", ... in engine order.
func engineNames(engines []EngineConfig, players []Player) []string {
	names := make([]string, len(engines))
	taken := map[string]bool{}
	for i, e := range engines {
		if e.Name != "" {
			names[i] = e.Name
			taken[e.Name] = true
		}
	}
	for i, e := range engines {
		if e.Name != "" {
			continue
		}
		base := ""
		if id, ok := players[i].(engineID); ok {
			base = id.EngineID()
		}
		if base == "" && e.Cmd != "" {
			base = filepath.Base(e.Cmd)
		}
		if base == "" {
			base = "engine"
		}
		name := base
		for k := 2; taken[name]; k++ {
			name = base + " (" + strconv.Itoa(k) + ")"
		}
		taken[name] = true
		names[i] = name
	}
	return names
}

func newStandings(names []string, s *Schedule) *Standings {
	st := &Standings{Engines: names, Schedule: s, Status: StatusRunning, Tally: Tally{Terminations: map[string]int{}}}
	for _, p := range s.Pairings() {
		st.Pairings = append(st.Pairings, PairingResult{A: p[0], B: p[1]})
	}
	return st
}

// tournamentRun is one session of a tournament.
type tournamentRun struct {
	t  *Tournament
	s  *Schedule
	st *Standings

	results []byte // per game: resultChar, or '.' until counted
	// resumed is results as the session found them: what nextUnit skips.
	// (results itself is the collector's; the slots must not read it.)
	resumed   []byte
	nextUnitI int // the next unit nextUnit looks at

	pgnFile   *os.File
	pgn       *bufio.Writer
	pgnOffset int64 // the PGN file's length after the last counted game

	start     time.Time
	earlier   time.Duration // elapsed in earlier sessions
	lastSave  time.Time
	saveCount int
}

func (r *tournamentRun) elapsed() time.Duration { return r.earlier + time.Since(r.start) }

// unitsLeft is how many units still have games to play, -1 without end.
func (r *tournamentRun) unitsLeft() int {
	n := r.s.Len()
	if n < 0 {
		return -1
	}
	left := 0
	for u := 0; u*r.s.Repeat < n; u++ {
		for k := u * r.s.Repeat; k < (u+1)*r.s.Repeat; k++ {
			if !r.doneBefore(k) {
				left++
				break
			}
		}
	}
	return left
}

func (r *tournamentRun) done(k int) bool { return k < len(r.results) && r.results[k] != '.' }

// doneBefore reports whether game k was counted before this session: the
// only games nextUnit skips (a unit is dispatched once per session).
func (r *tournamentRun) doneBefore(k int) bool { return k < len(r.resumed) && r.resumed[k] != '.' }

// nextUnit gives the next unit with games to play (its games not counted
// yet); called by the slots under their lock.
func (r *tournamentRun) nextUnit() (*unit, bool) {
	n := r.s.Len()
	for ; n < 0 || r.nextUnitI*r.s.Repeat < n; r.nextUnitI++ {
		i := r.nextUnitI
		var games []unitGame
		pairing := 0
		for k := i * r.s.Repeat; k < (i+1)*r.s.Repeat; k++ {
			if r.doneBefore(k) {
				continue
			}
			g := r.s.Game(k)
			pairing = g.Pairing
			games = append(games, unitGame{index: k, white: g.White, black: g.Black, round: g.RoundTag()})
		}
		if len(games) == 0 {
			continue
		}
		r.nextUnitI++
		op := Opening{}
		if r.t.Openings != nil {
			op = r.t.Openings(i)
		}
		return &unit{index: i, pairing: pairing, opening: op, games: games}, true
	}
	return nil, false
}

// resultChar is a game's result in the state file: white won, black won,
// draw.
func resultChar(r Result) byte {
	switch r {
	case WhiteWins:
		return '1'
	case BlackWins:
		return '0'
	case Draw:
		return '='
	}
	return '.'
}

// record counts game k with result c into the standings (not the tally).
func (r *tournamentRun) record(k int, c byte) {
	for len(r.results) <= k {
		r.results = append(r.results, '.')
	}
	r.results[k] = c
	g := r.s.Game(k)
	p := &r.st.Pairings[g.Pairing]
	out := outcomeOf(c, g.White == p.A)
	switch out {
	case sprt.Win:
		p.Wins++
	case sprt.Draw:
		p.Draws++
	default:
		p.Losses++
	}
	if r.s.Paired() {
		if mate := k ^ 1; r.done(mate) {
			other := outcomeOf(r.results[mate], r.s.Game(mate).White == p.A)
			p.Penta[int(out)+int(other)]++
		}
	}
	for r.done(r.st.NextGame) {
		r.st.NextGame++
	}
}

// outcomeOf is the outcome for the engine that had white (aWhite) or black.
func outcomeOf(c byte, aWhite bool) sprt.Outcome {
	switch {
	case c == '=':
		return sprt.Draw
	case (c == '1') == aWhite:
		return sprt.Win
	}
	return sprt.Loss
}

// count folds a played unit in: standings, tally, PGN, state.
func (r *tournamentRun) count(ur *unitResult) error {
	for i, g := range ur.games {
		r.record(ur.unit.games[i].index, resultChar(g.Result))
		r.st.Tally.add(g)
	}
	r.st.Elapsed = r.elapsed()
	if r.pgn != nil {
		for _, g := range ur.games {
			if err := WritePGN(r.pgn, g, r.t.PGNOptions); err != nil {
				return fmt.Errorf("PGN: %w", err)
			}
		}
		if err := r.pgn.Flush(); err != nil {
			return fmt.Errorf("PGN: %w", err)
		}
	}
	return r.save(false)
}

func (r *tournamentRun) unitResult(ur *unitResult) *UnitResult {
	return &UnitResult{Unit: ur.unit.index, Pairing: ur.unit.pairing, Opening: ur.unit.opening, Games: ur.games}
}

// countingWriter counts the bytes that reach the PGN file.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	*c.n += int64(n)
	return n, err
}

// openPGN opens the PGN file for appending, cut back to the resumed
// state's length: games written after the state's last save are written
// again when they are played again.
func (r *tournamentRun) openPGN() error {
	t := r.t
	switch {
	case t.PGNFile != "":
		f, err := os.OpenFile(t.PGNFile, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("PGN file: %w", err)
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return fmt.Errorf("PGN file: %w", err)
		}
		size := fi.Size()
		if t.Resume != nil && t.Resume.PGN != nil {
			want := t.Resume.PGN.Offset
			if size < want {
				f.Close()
				return fmt.Errorf("PGN file %s: %d bytes, shorter than the %d bytes the state file counts: it was changed since", t.PGNFile, size, want)
			}
			if err := f.Truncate(want); err != nil {
				f.Close()
				return fmt.Errorf("PGN file: %w", err)
			}
			size = want
		}
		if _, err := f.Seek(size, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("PGN file: %w", err)
		}
		r.pgnFile, r.pgnOffset = f, size
		r.pgn = bufio.NewWriterSize(countingWriter{f, &r.pgnOffset}, 64<<10)
	case t.PGN != nil:
		r.pgn = bufio.NewWriterSize(t.PGN, 64<<10)
	}
	return nil
}

func (r *tournamentRun) closePGN() {
	if r.pgn != nil {
		r.pgn.Flush()
	}
	if r.pgnFile != nil {
		r.pgnFile.Close()
	}
}
