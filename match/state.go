package match

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/base/apierr"
)

// StateFormat and StateVersion mark a tournament state file.
const (
	StateFormat  = "arbiter-match-state"
	StateVersion = 1
)

// State is a tournament's progress as its state file holds it: enough to
// resume it exactly (the caller's configuration, the schedule, every
// game's result) and to report on it without playing.
type State struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Config is the caller's description of the tournament, verbatim
	// (Tournament.StateConfig).
	Config   json.RawMessage `json:"config,omitempty"`
	Engines  []string        `json:"engines"`
	Schedule StateSchedule   `json:"schedule"`
	// Results holds one character per game of the schedule, in schedule
	// order: '1' white won, '0' black won, '=' a draw, '.' not counted.
	Results string `json:"results"`
	// GamesDone counts the '1', '0' and '=' in Results; NextGame is the
	// first '.' and NextOpening its unit's opening number.
	GamesDone   int        `json:"games_done"`
	NextGame    int        `json:"next_game"`
	NextOpening int        `json:"next_opening"`
	PGN         *StatePGN  `json:"pgn,omitempty"`
	Tally       StateTally `json:"tally"`
	ElapsedMS   int64      `json:"elapsed_ms"`
	Status      Status     `json:"status"`
	Failure     string     `json:"failure,omitempty"`
	Updated     time.Time  `json:"updated"`
}

// StateSchedule is the schedule in a state file (fastchess's names).
type StateSchedule struct {
	Type          Kind `json:"type"`
	GauntletSeeds int  `json:"gauntlet_seeds,omitempty"`
	Rounds        int  `json:"rounds"`
	Games         int  `json:"games"`
	Repeat        int  `json:"repeat"`
	NoSwap        bool `json:"noswap,omitempty"`
	Reverse       bool `json:"reverse,omitempty"`
}

// StatePGN is the PGN file and its length when the state was written.
type StatePGN struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
}

// StateTally is the tally's counts (the incidents themselves are in the
// PGN).
type StateTally struct {
	TimeLosses   int            `json:"time_losses"`
	Crashes      int            `json:"crashes"`
	Hangs        int            `json:"hangs"`
	Illegal      int            `json:"illegal_moves"`
	Overruns     int            `json:"overruns"`
	MaxOverrunUS int64          `json:"max_overrun_us"`
	Restarts     int            `json:"restarts"`
	Abandoned    int            `json:"abandoned,omitempty"`
	Terminations map[string]int `json:"terminations,omitempty"`
}

// LoadState reads a state file, checking its shape.
func LoadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state file %s: not a match state (%v)", path, err)
	}
	if st.Format != StateFormat {
		return nil, fmt.Errorf("state file %s: format %s, want %q", path, apierr.Q(st.Format), StateFormat)
	}
	if st.Version != StateVersion {
		return nil, fmt.Errorf("state file %s: version %d, this arbiter reads version %d", path, st.Version, StateVersion)
	}
	if strings.Trim(st.Results, "10=.") != "" {
		return nil, fmt.Errorf("state file %s: results hold characters other than 1, 0, = and .", path)
	}
	if len(st.Engines) < 2 {
		return nil, fmt.Errorf("state file %s: %d engines", path, len(st.Engines))
	}
	if _, err := st.schedule(); err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	return &st, nil
}

func (st *State) schedule() (*Schedule, error) {
	sc := st.Schedule
	s, err := NewSchedule(len(st.Engines), sc.Type, sc.GauntletSeeds, sc.Rounds, sc.Games, sc.Repeat)
	if err == nil {
		s.NoSwap, s.Reverse = sc.NoSwap, sc.Reverse
	}
	return s, err
}

// matches checks that the state is of a tournament with schedule s.
func (st *State) matches(s *Schedule) error {
	o, err := st.schedule()
	if err != nil {
		return fmt.Errorf("resume: %w", err)
	}
	if !o.Same(s) {
		return fmt.Errorf("resume: the state is of a %s, not a %s", o, s)
	}
	if n := s.Len(); n >= 0 && len(st.Results) > n {
		return fmt.Errorf("resume: the state holds %d results for %d games", len(st.Results), n)
	}
	return nil
}

// resume takes over the counted games of st.
func (r *tournamentRun) resume(st *State) error {
	if strings.Join(st.Engines, "\x00") != strings.Join(r.st.Engines, "\x00") {
		return fmt.Errorf("resume: the state's engines are %q, these are %q", st.Engines, r.st.Engines)
	}
	if st.PGN != nil && r.t.PGNFile != st.PGN.File {
		return fmt.Errorf("resume: the state's games are in the PGN file %q, not %q", st.PGN.File, r.t.PGNFile)
	}
	for k := 0; k < len(st.Results); k++ {
		if c := st.Results[k]; c != '.' {
			r.record(k, c)
		}
	}
	for len(r.results) < len(st.Results) {
		r.results = append(r.results, '.')
	}
	t := &r.st.Tally
	t.Games = r.st.countDone()
	t.TimeLosses, t.Crashes, t.Hangs = st.Tally.TimeLosses, st.Tally.Crashes, st.Tally.Hangs
	t.Illegal, t.Overruns, t.Restarts, t.Abandoned = st.Tally.Illegal, st.Tally.Overruns, st.Tally.Restarts, st.Tally.Abandoned
	t.MaxOverrun = time.Duration(st.Tally.MaxOverrunUS) * time.Microsecond
	for k, v := range st.Tally.Terminations {
		t.Terminations[k] = v
	}
	r.earlier = time.Duration(st.ElapsedMS) * time.Millisecond
	return nil
}

// countDone counts the games counted in the pairings.
func (s *Standings) countDone() int {
	n := int64(0)
	for _, p := range s.Pairings {
		n += p.Wins + p.Draws + p.Losses
	}
	return int(n)
}

// state is the state file's content now.
func (r *tournamentRun) state() *State {
	s := r.s
	t := &r.st.Tally
	st := &State{
		Format: StateFormat, Version: StateVersion, Config: r.t.StateConfig,
		Engines:   r.st.Engines,
		Schedule:  StateSchedule{Type: s.Kind, GauntletSeeds: s.Seeds, Rounds: s.Rounds, Games: s.Games, Repeat: s.Repeat, NoSwap: s.NoSwap, Reverse: s.Reverse},
		Results:   string(r.results),
		GamesDone: t.Games, NextGame: r.st.NextGame, NextOpening: r.st.NextGame / s.Repeat,
		Tally: StateTally{TimeLosses: t.TimeLosses, Crashes: t.Crashes, Hangs: t.Hangs, Illegal: t.Illegal,
			Overruns: t.Overruns, MaxOverrunUS: t.MaxOverrun.Microseconds(), Restarts: t.Restarts, Abandoned: t.Abandoned, Terminations: t.Terminations},
		ElapsedMS: r.elapsed().Milliseconds(),
		Status:    r.st.Status,
		Failure:   r.st.Failure,
		Updated:   time.Now().UTC().Truncate(time.Second),
	}
	if r.pgnFile != nil {
		st.PGN = &StatePGN{File: r.t.PGNFile, Offset: r.pgnOffset}
	}
	return st
}

// save writes the state file, unless the last write is more recent than
// StateInterval and final is false.
func (r *tournamentRun) save(final bool) error {
	if r.t.StateFile == "" {
		return nil
	}
	every := r.t.StateInterval
	if every <= 0 {
		every = time.Second
	}
	if !final && time.Since(r.lastSave) < every {
		return nil
	}
	b, err := json.MarshalIndent(r.state(), "", "  ")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	if err := writeFileAtomic(r.t.StateFile, append(b, '\n')); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	r.lastSave = time.Now()
	r.saveCount++
	return nil
}

// writeFileAtomic replaces path with b: a reader (or a resume after a
// crash) sees the old file or the new one, never a mix.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
