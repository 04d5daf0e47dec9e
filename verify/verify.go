package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-chess/arbiter/engine"
)

// Options bound one position's descent.
type Options struct {
	// MaxFindings stops the descent after this many distinct findings
	// (default 8). Findings are distinct when their reasons differ; the
	// same bug met again in another branch only counts as a duplicate.
	MaxFindings int
	// MaxProbes bounds the engine queries per position (default 200): a
	// bug near the root makes most branches differ, and each descent step
	// costs an engine run.
	MaxProbes int
	// Threads for our own perft (0: all cores).
	Threads int
	// Reproduce, when set, is the --engine argument of `arbiter verify`
	// that runs this engine; each finding then carries the command that
	// reproduces it (Finding.Command).
	Reproduce string
}

func (o Options) withDefaults() Options {
	if o.MaxFindings <= 0 {
		o.MaxFindings = 8
	}
	if o.MaxProbes <= 0 {
		o.MaxProbes = 200
	}
	return o
}

// Target is a position to verify at a depth. Expected, when set, is the
// reference total (an EPD's count); otherwise Arbiter counts it.
type Target struct {
	ID       string        `json:"id"`
	FEN      string        `json:"fen"`
	Depth    int           `json:"depth"`
	Chess960 bool          `json:"chess960,omitempty"`
	Expected *engine.Count `json:"-"`
}

// MoveIssue is one move the engine got wrong, with why.
type MoveIssue struct {
	Move   string `json:"move"`
	Reason string `json:"reason"`
}

// Finding is one position where the engine's move list is wrong (or its
// counts contradict themselves): the exact position, how to reach it from
// the root, and the moves.
type Finding struct {
	RootFEN string      `json:"root_fen"`
	Moves   []string    `json:"moves"` // from the root, UCI
	FEN     string      `json:"fen"`   // the position reached
	Depth   int         `json:"depth"` // remaining depth when found there
	Illegal []MoveIssue `json:"illegal,omitempty"`
	Missed  []MoveIssue `json:"missed,omitempty"`
	Notes   []string    `json:"notes,omitempty"` // miscounts, duplicates, inconsistent totals
	// Command reproduces the finding (Options.Reproduce, ReproduceCommand).
	Command string `json:"command,omitempty"`
}

// ReproduceCommand is the `arbiter verify` command line that verifies the
// engine (engineArg: its --engine argument) at the finding's position and
// remaining depth: the engine's move list is wrong right at its root, so
// the run reports the finding again, in one engine query when the bug is a
// missed or illegal move there.
func ReproduceCommand(engineArg string, f Finding, chess960 bool) string {
	cmd := "arbiter verify --engine " + shellQuote(engineArg) + " --fen " + shellQuote(f.FEN) + " --depth " + strconv.Itoa(max(f.Depth, 1))
	if chess960 {
		cmd += " --chess960"
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// signature names the kinds of error in f, without squares, for dedup.
func (f *Finding) signature() []string {
	var sig []string
	gen := func(r string) string {
		if i := strings.Index(r, " ("); i >= 0 {
			r = r[:i]
		}
		return r
	}
	for _, m := range f.Illegal {
		sig = append(sig, "illegal: "+gen(m.Reason))
	}
	for _, m := range f.Missed {
		sig = append(sig, "missed: "+gen(m.Reason))
	}
	for _, n := range f.Notes {
		sig = append(sig, "note: "+gen(n))
	}
	return sig
}

// Report is the verdict on one Target.
type Report struct {
	ID       string `json:"id"`
	Engine   string `json:"engine"`
	FEN      string `json:"fen"`
	Chess960 bool   `json:"chess960,omitempty"`
	Depth    int    `json:"depth"`
	// Status is "ok", "bug" (findings) or "error" (the engine failed).
	Status        string `json:"status"`
	Reference     string `json:"reference,omitempty"`      // the expected total
	ReferenceFrom string `json:"reference_from,omitempty"` // "epd" or "arbiter"
	EngineTotal   string `json:"engine_total,omitempty"`
	// ReferenceMismatch is set when the EPD's count differs from
	// Arbiter's: then one of them is wrong, not (only) the engine.
	ReferenceMismatch string       `json:"reference_mismatch,omitempty"`
	Findings          []Finding    `json:"findings,omitempty"`
	Duplicates        int          `json:"duplicates,omitempty"` // findings repeating a known bug
	Truncated         bool         `json:"truncated,omitempty"`  // stopped at MaxFindings or MaxProbes
	Probes            int          `json:"probes"`               // engine queries made
	Error             string       `json:"error,omitempty"`
	EngineError       *EngineError `json:"engine_error,omitempty"`
	Seconds           float64      `json:"seconds"`
}

// descent is the state of one position's search for the bug.
type descent struct {
	ctx     context.Context
	eng     Engine
	opt     Options
	root    string
	chess   bool
	rep     *Report
	seen    map[string]bool
	probeEr error
}

// Verify runs the engine on t and, on any disagreement, descends to the
// positions where its move generator goes wrong.
func Verify(ctx context.Context, eng Engine, t Target, opt Options) Report {
	opt = opt.withDefaults()
	start := time.Now()
	rep := Report{ID: t.ID, Engine: eng.Name(), FEN: t.FEN, Depth: t.Depth}
	finish := func() Report {
		rep.Seconds = time.Since(start).Seconds()
		// Findings win over a later engine failure: they are exact.
		switch {
		case len(rep.Findings) > 0 || rep.ReferenceMismatch != "":
			rep.Status = "bug"
		case rep.Error != "":
			rep.Status = "error"
		default:
			rep.Status = "ok"
		}
		return rep
	}
	pos, err := engine.ParseFEN(t.FEN)
	if err != nil {
		rep.Error = err.Error()
		return finish()
	}
	if t.Chess960 {
		pos.SetChess960(true)
	}
	rep.Chess960 = pos.IsChess960()
	if t.Depth < 1 || t.Depth > engine.MaxPerftDepth {
		rep.Error = fmt.Sprintf("depth %d: want 1..%d", t.Depth, engine.MaxPerftDepth)
		return finish()
	}
	// Engines get our normalised FEN: six fields, and Shredder letters in
	// Chess960 (what UCI_Chess960 engines read without ambiguity).
	root := pos.FEN()
	rep.FEN = root
	d := &descent{ctx: ctx, eng: eng, opt: opt, root: root, chess: pos.IsChess960(), rep: &rep, seen: map[string]bool{}}

	ed, err := d.query(nil, t.Depth)
	if err != nil {
		return finish()
	}
	rep.EngineTotal = ed.Total.String()

	var ours *engine.PerftResult
	ref := engine.Count{}
	if t.Expected != nil {
		ref, rep.ReferenceFrom = *t.Expected, "epd"
	} else {
		r, err := engine.RunPerft(ctx, pos, t.Depth, engine.PerftOptions{Threads: opt.Threads})
		if err != nil {
			rep.Error = err.Error()
			return finish()
		}
		ours, ref, rep.ReferenceFrom = &r, r.Nodes, "arbiter"
	}
	rep.Reference = ref.String()
	if ed.Total == ref && rootListOK(&pos, ed) {
		return finish()
	}
	if ours == nil {
		r, err := engine.RunPerft(ctx, pos, t.Depth, engine.PerftOptions{Threads: opt.Threads})
		if err != nil {
			rep.Error = err.Error()
			return finish()
		}
		ours = &r
		if r.Nodes != ref {
			rep.ReferenceMismatch = fmt.Sprintf("the EPD says %s at depth %d but Arbiter counts %s; the descent compares with Arbiter's counts", ref, t.Depth, r.Nodes)
		}
	}
	d.descend(pos, nil, t.Depth, ed, *ours)
	return finish()
}

// rootListOK is the cheap check when the totals agree and we have no
// divide of our own: the engine listed each legal move once and nothing
// else (compensating errors in the counts below are out of its reach).
func rootListOK(p *engine.Position, d Divide) bool {
	if len(d.Lines) != p.LegalMoveCount() {
		return false
	}
	seen := map[string]bool{}
	var sum engine.Count
	for _, l := range d.Lines {
		if seen[l.Move] {
			return false
		}
		seen[l.Move] = true
		if _, err := p.ParseUCIMove(l.Move); err != nil {
			return false
		}
		sum = sum.AddCount(l.Nodes)
	}
	return sum == d.Total
}

// query asks the engine, counting probes; an engine failure ends the
// descent and is recorded in the report.
func (d *descent) query(moves []string, depth int) (Divide, error) {
	d.rep.Probes++
	dv, err := d.eng.Divide(d.ctx, Query{FEN: d.root, Moves: moves, Depth: depth, Chess960: d.chess})
	if err != nil {
		d.probeEr = err
		d.rep.Error = err.Error()
		var ee *EngineError
		if errors.As(err, &ee) {
			d.rep.EngineError = ee
		}
	}
	return dv, err
}

func (d *descent) stop() bool {
	if d.probeEr != nil || d.ctx.Err() != nil {
		return true
	}
	if len(d.rep.Findings) >= d.opt.MaxFindings || d.rep.Probes >= d.opt.MaxProbes {
		d.rep.Truncated = true
		return true
	}
	return false
}

// add records f unless it only repeats bugs already found.
func (d *descent) add(f Finding) {
	sig := f.signature()
	fresh := false
	for _, s := range sig {
		if !d.seen[s] {
			fresh = true
		}
	}
	if !fresh {
		d.rep.Duplicates++
		return
	}
	for _, s := range sig {
		d.seen[s] = true
	}
	if d.opt.Reproduce != "" {
		f.Command = ReproduceCommand(d.opt.Reproduce, f, d.chess)
	}
	d.rep.Findings = append(d.rep.Findings, f)
}

// descend compares the engine's divide ed with ours at pos (reached from
// the root by moves, depth plies left), records what is wrong in the move
// list here, and recurses into every move both list with different counts.
func (d *descent) descend(pos engine.Position, moves []string, depth int, ed Divide, ours engine.PerftResult) {
	f := Finding{RootFEN: d.root, Moves: append([]string{}, moves...), FEN: pos.FEN(), Depth: depth}
	theirs := map[string]engine.Count{}
	var sum engine.Count
	for _, l := range ed.Lines {
		sum = sum.AddCount(l.Nodes)
		m, err := pos.ParseUCIMove(l.Move)
		if err != nil {
			f.Illegal = append(f.Illegal, MoveIssue{Move: l.Move, Reason: ClassifyIllegal(&pos, l.Move)})
			continue
		}
		canon := pos.UCIMove(m)
		if canon != l.Move {
			f.Notes = append(f.Notes, fmt.Sprintf("%s printed as %s (UCI notation for this move is %s)", canon, l.Move, canon))
		}
		if _, dup := theirs[canon]; dup {
			f.Notes = append(f.Notes, fmt.Sprintf("move listed twice (%s)", canon))
			continue
		}
		theirs[canon] = l.Nodes
	}
	if sum != ed.Total {
		f.Notes = append(f.Notes, fmt.Sprintf("engine's total is not the sum of its divide lines (total %s, sum %s)", ed.Total, sum))
	}
	var differ []engine.DivideEntry
	for _, e := range ours.Divide {
		n, ok := theirs[e.UCI]
		switch {
		case !ok:
			f.Missed = append(f.Missed, MoveIssue{Move: e.UCI, Reason: ClassifyMissed(&pos, e.Move)})
		case n != e.Nodes && depth == 1:
			f.Notes = append(f.Notes, fmt.Sprintf("move counted more than once at depth 1 (%s counted %s)", e.UCI, n))
		case n != e.Nodes:
			differ = append(differ, e)
		}
	}
	if len(f.Illegal)+len(f.Missed)+len(f.Notes) > 0 {
		d.add(f)
	}
	// Cheapest subtrees first: each finding costs less to reach there.
	sort.SliceStable(differ, func(i, j int) bool {
		a, b := differ[i].Nodes, differ[j].Nodes
		return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo < b.Lo
	})
	for _, e := range differ {
		if d.stop() {
			return
		}
		child := pos
		child.MakeMove(e.Move)
		cm := append(append([]string{}, moves...), e.UCI)
		cd, err := d.query(cm, depth-1)
		if err != nil {
			return
		}
		co, err := engine.RunPerft(d.ctx, child, depth-1, engine.PerftOptions{Threads: d.opt.Threads})
		if err != nil {
			return
		}
		if cd.Total == co.Nodes && sameDivide(&child, cd, co) {
			// The engine's own divide of the child agrees with us: its count
			// for this move at the parent came from somewhere else (a hash
			// table, a make/unmake that differs from "position ... moves").
			g := Finding{RootFEN: d.root, Moves: append([]string{}, moves...), FEN: pos.FEN(), Depth: depth,
				Notes: []string{fmt.Sprintf("inconsistent counts: the divide here gives %s for %s, but perft %d after %s gives %s (which is right)",
					theirs[e.UCI], e.UCI, depth-1, e.UCI, cd.Total)}}
			d.add(g)
			continue
		}
		d.descend(child, cm, depth-1, cd, co)
	}
}

// sameDivide reports whether the engine's divide equals ours move by move.
func sameDivide(p *engine.Position, ed Divide, ours engine.PerftResult) bool {
	if len(ed.Lines) != len(ours.Divide) {
		return false
	}
	want := map[string]engine.Count{}
	for _, e := range ours.Divide {
		want[e.UCI] = e.Nodes
	}
	for _, l := range ed.Lines {
		m, err := p.ParseUCIMove(l.Move)
		if err != nil {
			return false
		}
		n, ok := want[p.UCIMove(m)]
		if !ok || n != l.Nodes {
			return false
		}
	}
	return true
}
