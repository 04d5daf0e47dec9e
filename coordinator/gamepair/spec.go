// Package gamepair is what the workloads that play game pairs share (match
// and SPRT tests, kinds/test; SPSA tunes, kinds/spsa): the checks
// of what a job plays (engines, time control, book, margins), the batch a
// worker is sent (openings of its pairs, seed, clocks scaled to the
// worker's speed), the check of a batch's result and the replay of its
// games (ReplayBatch: a game counts only if it is a game), incident
// classes and the per-worker judgement that stops offering a job to a
// worker that keeps losing games to its own faults, the queue that stores events raised under
// the core's lock, and the games counter; and the steps both workloads
// take alike: their settings (Settings), the spec a Create receives
// (SpecOf), the stored workers and failures on Load (StoredWorkers,
// LoadFailure), the batch result a Result receives (ResultOf) and Cancel.
// Package gamepairtest drives a core for their tests.
//
// It holds no job state: each workload keeps its jobs and calls in here.
package gamepair

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/engine/search"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

// Limits on what a game-pair job may ask for.
const (
	// MaxBatchPairs bounds a batch, so that its result (2 × pairs PGNs)
	// fits one message.
	MaxBatchPairs = 256
	// MaxOpenings bounds a job's book.
	MaxOpenings = 1_000_000

	// MaxNameBytes bounds engine names, book names and events.
	MaxNameBytes = 200
	// MaxWordBytes bounds a book order or a model name.
	MaxWordBytes    = 32
	maxPathBytes    = 4096 // engine command, directory, arguments
	maxArgs         = 256
	maxOptions      = 256
	maxOptionBytes  = 1024
	maxFENBytes     = 128 // the longest legal FEN is under 100 bytes
	maxOpeningMoves = 1000
	maxMoveBytes    = 8         // "e7e8q" is 5
	maxDuration     = time.Hour // time margin, hang timeout
)

// CheckEngine refuses an engine no worker could play or that would not fit
// a message: names, command, arguments and options bounded, the embedded
// engine's options known and in range, a binary's protocol known. which
// names the field ("engine_a").
func CheckEngine(which string, e *arbiterv1.EngineSpec) error {
	if e == nil {
		return apierr.Invalid("%s missing", which)
	}
	if err := checkEngineText(which, e); err != nil {
		return err
	}
	name := e.GetName()
	if strings.TrimSpace(name) == "" || len(name) > MaxNameBytes || !utf8.ValidString(name) {
		return apierr.Invalid("%s: name missing or longer than %d bytes", which, MaxNameBytes)
	}
	q := apierr.Q(name)
	if len(e.GetCommand()) > maxPathBytes || len(e.GetDir()) > maxPathBytes || len(e.GetProtocol()) > MaxNameBytes {
		return apierr.Invalid("%s %s: command, dir or protocol too long", which, q)
	}
	if len(e.GetArgs()) > maxArgs {
		return apierr.Invalid("%s %s: %d arguments, at most %d", which, q, len(e.GetArgs()), maxArgs)
	}
	for _, a := range e.GetArgs() {
		if len(a) > maxPathBytes {
			return apierr.Invalid("%s %s: argument %s longer than %d bytes", which, q, apierr.Q(a), maxPathBytes)
		}
	}
	if len(e.GetOptions()) > maxOptions {
		return apierr.Invalid("%s %s: %d options, at most %d", which, q, len(e.GetOptions()), maxOptions)
	}
	for k, v := range e.GetOptions() {
		if len(k) > MaxNameBytes || len(v) > maxOptionBytes {
			return apierr.Invalid("%s %s: option %s: name over %d or value over %d bytes", which, q, apierr.Q(k), MaxNameBytes, maxOptionBytes)
		}
	}
	if err := checkNet(which, e); err != nil {
		return err
	}
	if err := checkGate(which, e); err != nil {
		return err
	}
	if err := checkEngineSyzygy(which, e); err != nil {
		return err
	}
	switch {
	case matchspec.IsBuiltin(e):
		opts := e.GetOptions()
		for k := range opts {
			// A path names a file on the worker (and, checked here, on the
			// coordinator): neither machine's files are the submitter's to
			// name. A net travels as an artifact; tablebases are the
			// machine's own. The engine's option table says which options
			// name files (search.NamesFile).
			if !search.NamesFile(k) {
				continue
			}
			if strings.EqualFold(k, search.OptEvalFile) {
				return apierr.Invalid("%s %s: option %s names a file on the workers; give the net as net=SHA or net=FILE (arbiter net upload)", which, q, apierr.Q(k))
			}
			return apierr.Invalid("%s %s: option %s names a file on the workers, which is not a client's to name (set it in a local arbiter match or arbiter uci)", which, q, apierr.Q(k))
		}
		if e.GetNet() != nil {
			// UseNNUE gets its net on the worker, not here.
			opts = maps.Clone(opts)
			maps.DeleteFunc(opts, func(k, _ string) bool { return strings.EqualFold(k, search.OptUseNNUE) })
		}
		if err := matchspec.CheckBuiltinOptions(name, opts); err != nil {
			return apierr.Invalid("%s: %s", which, Brief(err))
		}
	case e.GetArtifact() != nil:
		if e.GetCommand() != "" || e.GetDir() != "" {
			return apierr.Invalid("%s %s: an uploaded engine (artifact) takes no command or dir", which, q)
		}
		if err := checkArtifact(which, e.GetArtifact()); err != nil {
			return err
		}
		switch e.GetProtocol() {
		case "", "uci", "xboard":
		default:
			return apierr.Invalid("%s %s: protocol %s (want uci or xboard)", which, q, apierr.Q(e.GetProtocol()))
		}
	case e.GetCommand() == "":
		return apierr.Invalid("%s %s: command missing (a UCI binary on the workers, or %q)", which, q, matchspec.Embedded)
	default:
		switch e.GetProtocol() {
		case "", "uci", "xboard":
		default:
			return apierr.Invalid("%s %s: protocol %s (want uci, xboard or builtin)", which, q, apierr.Q(e.GetProtocol()))
		}
	}
	for k := range e.GetOptions() {
		if strings.TrimSpace(k) == "" {
			return apierr.Invalid("%s %s: option with an empty name", which, q)
		}
	}
	return nil
}

// checkEngineText refuses a control character in any string of an engine
// spec: its name reaches PGN tags, its command, arguments and directory
// the worker's exec, its option names and values the engine's standard
// input as "setoption name N value V" lines (textcheck).
func checkEngineText(which string, e *arbiterv1.EngineSpec) error {
	fields := []Text{{What: which + " name", S: e.GetName()}, {What: which + " command", S: e.GetCommand()},
		{What: which + " dir", S: e.GetDir()}, {What: which + " protocol", S: e.GetProtocol()}}
	for i, a := range e.GetArgs() {
		fields = append(fields, Text{What: fmt.Sprintf("%s args[%d]", which, i), S: a})
	}
	for k, v := range e.GetOptions() {
		fields = append(fields, Text{What: which + " option name " + apierr.Q(k), S: k},
			Text{What: which + " option " + apierr.Q(k) + " value", S: v})
	}
	if a := e.GetArtifact(); a != nil {
		fields = append(fields, Text{What: which + " artifact build", S: a.GetBuild()}, Text{What: which + " artifact exe", S: a.GetExe()},
			Text{What: which + " artifact name", S: a.GetName()}, Text{What: which + " artifact sha256", S: a.GetSha256()})
	}
	for _, f := range fields {
		if err := textcheck.Check(f.What, f.S); err != nil {
			return apierr.Invalid("%s", err.Error())
		}
	}
	return nil
}

// CheckTimeControl refuses a time control that is missing or that no
// engine can play, and returns it as the match library's limits.
func CheckTimeControl(tc *arbiterv1.TimeControl) (match.Limits, error) {
	lim, err := matchspec.LimitsFromProto(tc, 1)
	if err != nil {
		return lim, apierr.Invalid("time control: %s", Brief(err))
	}
	if err := matchspec.CheckPlayable(lim); err != nil {
		return lim, apierr.Invalid("time control: %s", Brief(err))
	}
	return lim, nil
}

// CheckLimits refuses a test's time controls that no engine can play: each
// engine's own (which replaces the test's for it) and the test's, which may
// be missing only when both engines have their own. It returns each
// engine's limits; which names the engines' fields ("engine_a").
func CheckLimits(test *arbiterv1.TimeControl, which [2]string, engines [2]*arbiterv1.EngineSpec) ([2]match.Limits, error) {
	var lim [2]match.Limits
	if test != nil || engines[0].GetTimeControl() == nil || engines[1].GetTimeControl() == nil {
		l, err := CheckTimeControl(test)
		if err != nil {
			return lim, err
		}
		lim = [2]match.Limits{l, l}
	}
	for i, e := range engines {
		if e.GetTimeControl() == nil {
			continue
		}
		l, err := CheckTimeControl(e.GetTimeControl())
		if err != nil {
			return lim, apierr.Invalid("%s %s: %s", which[i], apierr.Q(e.GetName()), err.Error())
		}
		lim[i] = l
	}
	return lim, nil
}

// Text is a free-text field of a spec and its bound.
type Text struct {
	What string // "book name"
	S    string
	Max  int
}

// CheckText refuses a text field longer than its bound, not UTF-8, or
// holding a control character (these fields reach PGN tags and engines).
func CheckText(fields ...Text) error {
	for _, f := range fields {
		if len(f.S) > f.Max || !utf8.ValidString(f.S) {
			return apierr.Invalid("%s %s: must be at most %d bytes of UTF-8", f.What, apierr.Q(f.S), f.Max)
		}
		if err := textcheck.Check(f.What, f.S); err != nil {
			return apierr.Invalid("%s", err.Error())
		}
	}
	return nil
}

// Book is a job's openings and how they are played.
type Book struct {
	Openings []*arbiterv1.Opening // in file order
	Name     string
	Order    string // "sequential", "random"
	Seed     uint64
	Start    int
	Chess960 bool
}

// CheckOpenings validates every opening of the book (FEN and moves, bounded
// before they are parsed) and returns them in the order of play
// (match.OrderOpenings: fixed by the book, its order, seed and start).
func CheckOpenings(b Book) ([]*arbiterv1.Opening, error) {
	ops := b.Openings
	if len(ops) == 0 {
		return nil, apierr.Invalid("openings: none given")
	}
	if len(ops) > MaxOpenings {
		return nil, apierr.Invalid("openings: %d is more than 1,000,000", len(ops))
	}
	book := make([]match.Opening, len(ops))
	for i, o := range ops {
		if len(o.GetFen()) > maxFENBytes {
			return nil, apierr.Invalid("openings (%s): opening %d: FEN %s longer than %d bytes", b.Name, i, apierr.Q(o.GetFen()), maxFENBytes)
		}
		if len(o.GetMovesUci()) > maxOpeningMoves {
			return nil, apierr.Invalid("openings (%s): opening %d: %d moves, at most %d", b.Name, i, len(o.GetMovesUci()), maxOpeningMoves)
		}
		for _, m := range o.GetMovesUci() {
			if len(m) > maxMoveBytes {
				return nil, apierr.Invalid("openings (%s): opening %d: move %s is not a UCI move", b.Name, i, apierr.Q(m))
			}
		}
		op, err := matchspec.OpeningFromProto(o, b.Chess960)
		if err != nil {
			return nil, apierr.Invalid("openings (%s): %s", b.Name, Brief(err))
		}
		// Order by position in the book as sent (file order); the ordered
		// list points at the spec's own messages.
		book[i] = match.Opening{ID: i, FEN: op.FEN}
	}
	ordered, err := match.OrderOpenings(book, b.Order, b.Seed, b.Start)
	if err != nil {
		return nil, apierr.Invalid("openings: %s", Brief(err))
	}
	out := make([]*arbiterv1.Opening, len(ordered))
	for i, op := range ordered {
		out[i] = ops[op.ID]
	}
	return out, nil
}

// CheckShare refuses a throughput share that is not a number from 0 to
// 1e6 (0 reads as 1).
func CheckShare(tp float64) error {
	if math.IsNaN(tp) || tp < 0 || tp > 1e6 {
		return apierr.Invalid("throughput %v: must be between 0 and 1e6", tp)
	}
	return nil
}

// CheckReferenceNPS refuses an absurd reference speed.
func CheckReferenceNPS(nps uint64) error {
	if nps > matchspec.MaxNPS {
		return apierr.Invalid("reference nps %d: at most %d", nps, uint64(matchspec.MaxNPS))
	}
	return nil
}

// CheckMargins refuses a time margin or hang timeout outside [0, 1h].
func CheckMargins(timeMargin, hangTimeout *durationpb.Duration) error {
	for _, f := range []struct {
		what string
		d    *durationpb.Duration
	}{{"time margin", timeMargin}, {"hang timeout", hangTimeout}} {
		if f.d == nil {
			continue
		}
		if err := f.d.CheckValid(); err != nil || f.d.AsDuration() < 0 || f.d.AsDuration() > maxDuration {
			return apierr.Invalid("%s %v: must be between 0 and %v", f.what, f.d.AsDuration(), maxDuration)
		}
	}
	return nil
}

// AutoBatchPairs is the batch size that takes about batch wall time at
// speed refNPS under lim, between 1 and maxAuto (and MaxBatchPairs).
func AutoBatchPairs(lim match.Limits, refNPS uint64, batch time.Duration, maxAuto int) int {
	pairSecs := 2 * matchspec.GameSeconds(lim, float64(refNPS))
	n := int(math.Round(batch.Seconds() / pairSecs))
	return min(max(n, 1), maxAuto, MaxBatchPairs)
}

// Brief is an error's text cut to a length fit for a message (inner errors
// may quote a whole input).
func Brief(err error) string { return Clip(err.Error(), 200) }

// BookSpec is the spec of a game job, which carries its book (MatchSpec,
// SpsaSpec).
type BookSpec interface {
	proto.Message
	GetOpenings() []*arbiterv1.Opening
}

// SpecOf is a game workload's Create argument as its spec type T, copied
// so that the workload may fill in defaults. A missing spec is refused
// naming what (e.g. "match spec"), and a book of more than MaxOpenings
// before it is copied: refusing must not cost a copy of the book.
func SpecOf[T BookSpec](specAny any, what string) (T, error) {
	var none T
	in, ok := specAny.(T)
	if !ok || !in.ProtoReflect().IsValid() {
		return none, apierr.Invalid("%s missing", what)
	}
	if n := len(in.GetOpenings()); n > MaxOpenings {
		return none, apierr.Invalid("openings: %d is more than 1,000,000", n)
	}
	return proto.Clone(in).(T), nil
}
