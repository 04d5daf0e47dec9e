package matchplan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/arbiter-chess/arbiter/match"
	"github.com/arbiter-chess/arbiter/sprt"
)

// RunOptions are how a local match reports and what it plays with.
type RunOptions struct {
	// Out receives a line per game (unless Quiet), the live report every
	// RatingInterval games (0: at the end only) and the summary; with
	// JSON, only the result as one JSON object.
	Out            io.Writer
	Quiet          bool
	RatingInterval int
	JSON           bool
	// PGN receives every game when the plan has no PGN file (Flags.PGNOut).
	PGN io.Writer
	// StateFile, if set, is where the state is kept as games are counted;
	// Resume continues the match whose state that file held.
	StateFile string
	Resume    *match.State
	// TempState: the caller removes the state file once the match is
	// complete, so the JSON result does not name it then.
	TempState bool
	// Builtin makes the embedded engine's players (match/builtin.New).
	Builtin match.BuiltinFactory
}

// Run plays the plan on this machine: a two-engine match with fastchess's
// live report and the SPRT, or a tournament with a rating table. The
// standings' Status says whether it is complete (or stopped on the SPRT
// bound), interrupted (ctx ended: resumable from the state file) or failed
// (an engine failed without --recover: resumable). An error is the match's
// own: an engine that cannot start, a state or PGN file that cannot be
// written, or a *GateRefusal when an engine failed its movegen gate
// (gate.go) before the first game.
func (p *Plan) Run(ctx context.Context, o RunOptions) (*match.Standings, error) {
	cfg := p.Config
	stateConfig, err := json.Marshal(ConfigOf(p))
	if err != nil {
		return nil, err
	}
	t := &match.Tournament{
		Engines: p.Engines, Schedule: p.Schedule, Limits: cfg.Limits, Game: cfg.Game,
		Openings: cfg.Openings, Concurrency: cfg.Concurrency, Recover: p.Flags.Recover,
		PGNFile: p.Flags.PGNOut, PGNOptions: cfg.PGNOptions,
		StateFile: o.StateFile, StateConfig: stateConfig, Resume: o.Resume,
		Builtin: o.Builtin,
	}
	if t.PGNFile == "" {
		t.PGN = o.PGN
	}
	var seq *sprt.Sequential
	if p.SPRT != nil {
		seq, _ = sprt.NewSequential(*p.SPRT, 1)
	}
	rep := &reporter{out: o.Out, plan: p, seq: seq}
	if o.JSON {
		rep.out = io.Discard
		o.Quiet = true
	}
	gates, err := p.runGates(ctx, rep.out)
	if err != nil {
		if r, ok := err.(*GateRefusal); ok && o.JSON {
			writeRefusedJSON(o.Out, p, r)
		}
		return nil, err
	}
	t.OnStart = func(st *match.Standings) {
		rep.printed = st.Games
		book := p.BookName
		if book == "" {
			book = "start position"
		}
		if len(st.Engines) == 2 {
			fmt.Fprintf(rep.out, "Match %s vs %s: %s, %s, concurrency %d\n", st.Engines[0], st.Engines[1], p.Limits(), book, cfg.Concurrency)
			if note := p.RepeatNote(); note != "" {
				fmt.Fprintln(rep.out, note)
			}
		} else {
			fmt.Fprintf(rep.out, "Tournament: %s; %s, %s, concurrency %d\n", p.Schedule, p.Limits(), book, cfg.Concurrency)
		}
		if o.StateFile != "" {
			verb := "State"
			if o.Resume != nil {
				verb = fmt.Sprintf("Resuming after %d games; state", st.Games)
			}
			fmt.Fprintf(rep.out, "%s: %s (after Ctrl-C: arbiter match --resume %s)\n", verb, o.StateFile, o.StateFile)
		}
	}
	t.OnUnit = func(u *match.UnitResult, st *match.Standings) bool {
		if !o.Quiet {
			for _, g := range u.Games {
				fmt.Fprintf(rep.out, "Finished game %s (%s vs %s): %s {%s}\n", g.Round, g.White, g.Black, g.Result, g.Reason)
				for _, inc := range g.Incidents {
					if inc.Kind != match.IncOverrun {
						fmt.Fprintf(rep.out, "  incident: %s\n", inc)
					}
				}
			}
		}
		stop := false
		if seq != nil {
			s, err := seq.Update(st.Pairings[0].Results())
			stop = err == nil && s.State != sprt.Continue
		}
		if !stop && p.StopPrecision > 0 {
			done, _, err := sprt.PrecisionReached(st.Pairings[0].Results(), p.StopPrecision, sprt.DefaultAnytimeLevel)
			stop = err == nil && done
			rep.precisionStop = stop
		}
		before := st.Games - len(u.Games)
		if stop || (o.RatingInterval > 0 && st.Games/o.RatingInterval != before/o.RatingInterval) {
			rep.print(st)
		}
		return stop
	}
	st, err := t.Run(ctx)
	if err != nil {
		return st, err
	}
	if seq != nil && st.Games > 0 {
		seq.Update(st.Pairings[0].Results())
	}
	if o.JSON {
		stateFile := o.StateFile
		if o.TempState && (st.Status == match.StatusComplete || st.Status == match.StatusStopped) {
			stateFile = ""
		}
		return st, writeJSON(o.Out, p, st, seq, stateFile, rep.precisionStop, gates)
	}
	if rep.printed != st.Games {
		rep.print(st)
	}
	rep.summary(st, o.StateFile)
	return st, nil
}

// reporter prints the live report: fastchess's for two engines, the
// rating table for more.
type reporter struct {
	out  io.Writer
	plan *Plan
	seq  *sprt.Sequential
	// printed is the game count of the last report, so the final report is
	// not repeated when the last unit just printed one.
	printed int
	// precisionStop: --stop precision= ended the match.
	precisionStop bool
}

// anytimeOf is the anytime-valid interval of a two-engine match's result
// (nil for a tournament or before any game).
func anytimeOf(st *match.Standings) *sprt.AnytimeElo {
	if len(st.Engines) != 2 || st.Games == 0 {
		return nil
	}
	a, err := sprt.AnytimeInterval(st.Pairings[0].Results(), sprt.DefaultAnytimeLevel)
	if err != nil {
		return nil
	}
	return &a
}

// AnytimeLine is how every report shows the anytime-valid interval beside
// Fishtest's figures: "Anytime-valid 95%: Elo [-6.02, 12.40], nElo [...]".
func AnytimeLine(a sprt.AnytimeElo) string {
	return fmt.Sprintf("Anytime-valid %.4g%%: Elo [%.2f, %.2f], nElo [%.2f, %.2f] (holds however the test was stopped; nElo at the sample deviation)",
		100*a.Level, a.Elo[0], a.Elo[1], a.NElo[0], a.NElo[1])
}

func (r *reporter) print(st *match.Standings) {
	r.printed = st.Games
	if len(st.Engines) > 2 {
		fmt.Fprintf(r.out, "Ratings after %d games:\n%s", st.Games, st.Ratings())
		return
	}
	res := st.Pairings[0].Results()
	if res.Wins+res.Draws+res.Losses == 0 {
		return
	}
	book := r.plan.BookName
	if book == "" {
		book = "start position"
	}
	fmt.Fprint(r.out, sprt.FormatReport(sprt.Report{
		First: st.Engines[0], Second: st.Engines[1],
		Details: r.plan.Limits() + ", " + book,
		Results: res,
		SPRT:    r.plan.SPRT,
	}))
}

func (r *reporter) summary(st *match.Standings, stateFile string) {
	w := r.out
	if r.seq != nil {
		switch r.seq.Status().State {
		case sprt.Accepted:
			fmt.Fprintln(w, "SPRT: H1 was accepted")
		case sprt.Rejected:
			fmt.Fprintln(w, "SPRT: H0 was accepted")
		default:
			fmt.Fprintln(w, "SPRT: no decision")
		}
	}
	if a := anytimeOf(st); a != nil {
		fmt.Fprintln(w, AnytimeLine(*a))
		if r.precisionStop {
			fmt.Fprintf(w, "Stopped: precision reached (the anytime interval is %.2f Elo wide, below --stop precision=%g)\n", a.Width(), r.plan.StopPrecision)
		}
	}
	rate := 0.0
	if st.Elapsed > 0 {
		rate = float64(st.Games) / st.Elapsed.Minutes()
	}
	fmt.Fprintf(w, "Games: %d in %v (%.1f games/min); time losses %d, crashes %d, hangs %d, illegal moves %d, overruns %d (max %v), restarts %d, abandoned %d\n",
		st.Games, st.Elapsed.Round(time.Millisecond), rate, st.TimeLosses, st.Crashes, st.Hangs, st.Illegal, st.Overruns, st.MaxOverrun.Round(time.Microsecond), st.Restarts, st.Abandoned)
	// The runner's own CPU, never the engines' (they are children).
	if u, ok := cpuUsage(); ok && st.Games > 0 {
		cpu := u.user + u.system
		fmt.Fprintf(w, "Runner CPU: %.2f ms/game (%v total: user %v, system %v; engines %v)\n", float64(cpu.Microseconds())/1000/float64(st.Games), cpu.Round(time.Millisecond),
			u.user.Round(time.Millisecond), u.system.Round(time.Millisecond), u.children.Round(time.Millisecond))
	}
	switch st.Status {
	case match.StatusInterrupted, match.StatusFailed:
		switch {
		case st.Status == match.StatusFailed && st.TooManyAbandoned:
			fmt.Fprintf(w, "Stopped: %s\n", st.Failure)
		case st.Status == match.StatusFailed:
			fmt.Fprintf(w, "Stopped: %s (give --recover to restart a failed engine and go on)\n", st.Failure)
		default:
			fmt.Fprintf(w, "Interrupted after %d games\n", st.Games)
		}
		if stateFile != "" {
			fmt.Fprintf(w, "Resume with: arbiter match --resume %s\n", stateFile)
		}
	default:
		fmt.Fprintln(w, "Finished match")
	}
}

// Result is `arbiter match --json`'s output: plain integers, lower-case
// states; Elo and its error are null for an engine not rated yet.
type Result struct {
	Status    string          `json:"status"`
	Failure   string          `json:"failure,omitempty"`
	Engines   []string        `json:"engines"`
	Schedule  ResultSchedule  `json:"schedule"`
	Games     int             `json:"games"`
	Scheduled int             `json:"scheduled"` // -1: until the SPRT stops it
	Pairings  []ResultPairing `json:"pairings"`
	Ratings   []ResultRating  `json:"ratings"`
	Anchor    string          `json:"anchor,omitempty"`
	SPRT      *sprt.Status    `json:"sprt,omitempty"`
	// Anytime is a two-engine match's anytime-valid interval; PrecisionStop
	// says --stop precision= ended it.
	Anytime       *sprt.AnytimeElo `json:"anytime,omitempty"`
	PrecisionStop bool             `json:"precision_stop,omitempty"`
	Incidents     ResultIncidents  `json:"incidents"`
	ElapsedMS     int64            `json:"elapsed_ms"`
	StateFile     string           `json:"state_file,omitempty"`
	PGNFile       string           `json:"pgn_file,omitempty"`
	// MovegenGate holds the verdict of each engine's movegen gate
	// (perft-gate=), in engine order; the failed one when the gate
	// refused the match (status "refused").
	MovegenGate []GateJSON `json:"movegen_gate,omitempty"`
}

type ResultSchedule struct {
	Type          string `json:"type"`
	GauntletSeeds int    `json:"gauntlet_seeds,omitempty"`
	Rounds        int    `json:"rounds"`
	Games         int    `json:"games"`
	Repeat        int    `json:"repeat"`
}

type ResultPairing struct {
	A           string   `json:"a"`
	B           string   `json:"b"`
	Wins        int64    `json:"wins"`
	Draws       int64    `json:"draws"`
	Losses      int64    `json:"losses"`
	Pentanomial [5]int64 `json:"pentanomial"`
}

type ResultRating struct {
	Rank   int      `json:"rank"`
	Name   string   `json:"name"`
	Elo    *float64 `json:"elo"`
	Error  *float64 `json:"error"`
	Games  int64    `json:"games"`
	Wins   int64    `json:"wins"`
	Draws  int64    `json:"draws"`
	Losses int64    `json:"losses"`
}

type ResultIncidents struct {
	TimeLosses int `json:"time_losses"`
	Crashes    int `json:"crashes"`
	Hangs      int `json:"hangs"`
	Illegal    int `json:"illegal_moves"`
	Overruns   int `json:"overruns"`
	Restarts   int `json:"restarts"`
	Abandoned  int `json:"abandoned"`
}

func writeJSON(w io.Writer, p *Plan, st *match.Standings, seq *sprt.Sequential, stateFile string, precisionStop bool, gates []GateJSON) error {
	s := p.Schedule
	r := Result{
		Status: string(st.Status), Failure: st.Failure, Engines: st.Engines,
		Schedule: ResultSchedule{Type: string(s.Kind), GauntletSeeds: s.Seeds, Rounds: s.Rounds, Games: s.Games, Repeat: s.Repeat},
		Games:    st.Games, Scheduled: s.Len(),
		Incidents: ResultIncidents{TimeLosses: st.TimeLosses, Crashes: st.Crashes, Hangs: st.Hangs, Illegal: st.Illegal,
			Overruns: st.Overruns, Restarts: st.Restarts, Abandoned: st.Abandoned},
		ElapsedMS: st.Elapsed.Milliseconds(), StateFile: stateFile, PGNFile: p.Flags.PGNOut,
		Anytime: anytimeOf(st), PrecisionStop: precisionStop, MovegenGate: gates,
	}
	for _, pr := range st.Pairings {
		rp := ResultPairing{A: st.Engines[pr.A], B: st.Engines[pr.B], Wins: pr.Wins, Draws: pr.Draws, Losses: pr.Losses}
		for k, c := range pr.Penta {
			rp.Pentanomial[k] = int64(c)
		}
		r.Pairings = append(r.Pairings, rp)
	}
	table := st.Ratings()
	r.Anchor = table.Anchor
	for i, row := range table.Rows {
		rr := ResultRating{Rank: i + 1, Name: row.Name, Games: row.Games, Wins: row.Wins, Draws: row.Draws, Losses: row.Losses}
		if !math.IsNaN(row.Elo) {
			elo := round1(row.Elo)
			rr.Elo = &elo
			if row.Name != table.Anchor && !math.IsNaN(row.Error) && !math.IsInf(row.Error, 0) {
				e := round1(row.Error)
				rr.Error = &e
			}
		}
		r.Ratings = append(r.Ratings, rr)
	}
	if seq != nil {
		ss := seq.Status()
		r.SPRT = &ss
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
