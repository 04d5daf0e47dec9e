package gamejob

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/coordinator/core"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/apierr"
	"github.com/arbiter-chess/arbiter/internal/logging"
	"github.com/arbiter-chess/arbiter/internal/matchspec"
	"github.com/arbiter-chess/arbiter/match"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// Limits on what a test may ask for.
const (
	// MaxBatchPairs bounds a batch, so that its result (2 × pairs PGNs)
	// fits one message.
	MaxBatchPairs = 256
	// MaxOpenings bounds a test's book.
	MaxOpenings = 1_000_000
	// MaxGames bounds a test's games; an SPRT without a cap on games stops
	// there too, which bounds every batch index.
	MaxGames = 100_000_000
	// MaxPairs is MaxGames in pairs.
	MaxPairs = MaxGames / 2

	// Tests stored before MaxBatchPairs existed were accepted with up to
	// this many pairs per batch; they still load.
	maxStoredBatchPairs = 10_000

	maxNameBytes    = 200  // engine names, book name, event
	maxWordBytes    = 32   // book order, SPRT model
	maxPathBytes    = 4096 // engine command, directory, arguments
	maxArgs         = 256
	maxOptions      = 256
	maxOptionBytes  = 1024
	maxFENBytes     = 128 // the longest legal FEN is under 100 bytes
	maxOpeningMoves = 1000
	maxMoveBytes    = 8 // "e7e8q" is 5
	maxReferenceNPS = 1e12
	maxDuration     = time.Hour // time margin, hang timeout
)

// checked is a validated spec with what the workload derives from it.
type checked struct {
	spec       *arbiterv1.MatchSpec // defaults filled in
	kind       string
	openings   []*arbiterv1.Opening // in the order of play
	params     *sprt.Params
	batchPairs int
	totalPairs int
}

// checkSpec validates a test and fills in its defaults (in spec). Every
// refusal is an *apierr.Error naming the input. maxBatch is MaxBatchPairs
// at submit and the old limit for stored tests.
func (w *Workload) checkSpec(spec *arbiterv1.MatchSpec, maxBatch int) (*checked, error) {
	if spec == nil {
		return nil, apierr.Invalid("spec missing")
	}
	for i, e := range []*arbiterv1.EngineSpec{spec.GetEngineA(), spec.GetEngineB()} {
		if err := checkEngine([2]string{"engine_a", "engine_b"}[i], e); err != nil {
			return nil, err
		}
	}
	if spec.GetEngineA().GetName() == spec.GetEngineB().GetName() {
		return nil, apierr.Invalid("both engines are named %s", apierr.Q(spec.GetEngineA().GetName()))
	}
	lim, err := matchspec.LimitsFromProto(spec.GetTimeControl(), 1)
	if err != nil {
		return nil, apierr.Invalid("time control: %s", brief(err))
	}
	if err := matchspec.CheckPlayable(lim); err != nil {
		return nil, apierr.Invalid("time control: %s", brief(err))
	}
	for _, f := range []struct {
		what string
		s    string
		max  int
	}{{"book name", spec.GetBookName(), maxNameBytes}, {"event", spec.GetEvent(), maxNameBytes},
		{"book order", spec.GetBookOrder(), maxWordBytes}, {"sprt model", spec.GetSprt().GetModel(), maxWordBytes}} {
		if len(f.s) > f.max || !utf8.ValidString(f.s) {
			return nil, apierr.Invalid("%s %s: must be at most %d bytes of UTF-8", f.what, apierr.Q(f.s), f.max)
		}
	}
	c := &checked{spec: spec}
	if c.openings, err = checkOpenings(spec); err != nil {
		return nil, err
	}
	games := spec.GetGames()
	if games%2 != 0 {
		return nil, apierr.Invalid("games: %d is odd (games are played in pairs)", games)
	}
	if games > MaxGames {
		return nil, apierr.Invalid("games: %d is more than 100,000,000", games)
	}
	c.totalPairs = int(games / 2)
	if sp := spec.GetSprt(); sp != nil {
		p := sprt.Params{Elo0: sp.GetElo0(), Elo1: sp.GetElo1(), Alpha: sp.GetAlpha(), Beta: sp.GetBeta(), Model: sprt.Normalized}
		if p.Alpha == 0 {
			p.Alpha = 0.05
		}
		if p.Beta == 0 {
			p.Beta = 0.05
		}
		if sp.GetModel() != "" {
			if p.Model, err = sprt.ParseModel(sp.GetModel()); err != nil {
				return nil, apierr.Invalid("sprt: %s", brief(err))
			}
		}
		if err := p.Validate(); err != nil {
			return nil, apierr.Invalid("sprt: %s", brief(err))
		}
		sp.Alpha, sp.Beta, sp.Model = p.Alpha, p.Beta, string(p.Model)
		c.params = &p
		c.kind = KindSPRT
	} else if games == 0 {
		return nil, apierr.Invalid("give a number of games or SPRT bounds")
	} else {
		c.kind = KindMatch
	}
	if tp := spec.GetThroughput(); math.IsNaN(tp) || tp < 0 || tp > 1e6 {
		return nil, apierr.Invalid("throughput %v: must be between 0 and 1e6", tp)
	}
	if spec.GetThroughput() == 0 {
		spec.Throughput = 1
	}
	if spec.GetReferenceNps() > maxReferenceNPS {
		return nil, apierr.Invalid("reference nps %d: at most %d", spec.GetReferenceNps(), uint64(maxReferenceNPS))
	}
	for _, f := range []struct {
		what string
		d    *durationpb.Duration
	}{{"time margin", spec.GetTimeMargin()}, {"hang timeout", spec.GetHangTimeout()}} {
		if f.d == nil {
			continue
		}
		if err := f.d.CheckValid(); err != nil || f.d.AsDuration() < 0 || f.d.AsDuration() > maxDuration {
			return nil, apierr.Invalid("%s %v: must be between 0 and %v", f.what, f.d.AsDuration(), maxDuration)
		}
	}
	if spec.GetBatchPairs() > uint32(maxBatch) {
		return nil, apierr.Invalid("batch pairs %d: at most %d", spec.GetBatchPairs(), maxBatch)
	}
	if spec.GetBatchPairs() == 0 {
		ref := spec.GetReferenceNps()
		if ref == 0 {
			ref = w.cfg.ReferenceNPS
		}
		pairSecs := 2 * matchspec.GameSeconds(lim, float64(ref))
		n := int(math.Round(w.cfg.BatchDuration.Seconds() / pairSecs))
		spec.BatchPairs = uint32(min(max(n, 1), w.cfg.MaxAutoBatchPairs, MaxBatchPairs))
	}
	c.batchPairs = int(spec.GetBatchPairs())
	if c.totalPairs > 0 && c.batchPairs > c.totalPairs {
		c.batchPairs = c.totalPairs
		spec.BatchPairs = uint32(c.totalPairs)
	}
	return c, nil
}

func checkEngine(which string, e *arbiterv1.EngineSpec) error {
	if e == nil {
		return apierr.Invalid("%s missing", which)
	}
	name := e.GetName()
	if strings.TrimSpace(name) == "" || len(name) > maxNameBytes || !utf8.ValidString(name) {
		return apierr.Invalid("%s: name missing or longer than %d bytes", which, maxNameBytes)
	}
	q := apierr.Q(name)
	if len(e.GetCommand()) > maxPathBytes || len(e.GetDir()) > maxPathBytes || len(e.GetProtocol()) > maxNameBytes {
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
		if len(k) > maxNameBytes || len(v) > maxOptionBytes {
			return apierr.Invalid("%s %s: option %s: name over %d or value over %d bytes", which, q, apierr.Q(k), maxNameBytes, maxOptionBytes)
		}
	}
	switch {
	case matchspec.IsBuiltin(e):
		if err := matchspec.CheckBuiltinOptions(name, e.GetOptions()); err != nil {
			return apierr.Invalid("%s: %s", which, brief(err))
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

// checkOpenings validates every opening of the book (FEN and moves, bounded
// before they are parsed) and returns them in the order of play.
func checkOpenings(spec *arbiterv1.MatchSpec) ([]*arbiterv1.Opening, error) {
	ops := spec.GetOpenings()
	if len(ops) == 0 {
		return nil, apierr.Invalid("openings: none given")
	}
	if len(ops) > MaxOpenings {
		return nil, apierr.Invalid("openings: %d is more than 1,000,000", len(ops))
	}
	book := make([]match.Opening, len(ops))
	for i, o := range ops {
		if len(o.GetFen()) > maxFENBytes {
			return nil, apierr.Invalid("openings (%s): opening %d: FEN %s longer than %d bytes", spec.GetBookName(), i, apierr.Q(o.GetFen()), maxFENBytes)
		}
		if len(o.GetMovesUci()) > maxOpeningMoves {
			return nil, apierr.Invalid("openings (%s): opening %d: %d moves, at most %d", spec.GetBookName(), i, len(o.GetMovesUci()), maxOpeningMoves)
		}
		for _, m := range o.GetMovesUci() {
			if len(m) > maxMoveBytes {
				return nil, apierr.Invalid("openings (%s): opening %d: move %s is not a UCI move", spec.GetBookName(), i, apierr.Q(m))
			}
		}
		op, err := matchspec.OpeningFromProto(o, spec.GetChess960())
		if err != nil {
			return nil, apierr.Invalid("openings (%s): %s", spec.GetBookName(), brief(err))
		}
		// Order by position in the book as sent (file order); the ordered
		// list points at the spec's own messages.
		book[i] = match.Opening{ID: i, FEN: op.FEN}
	}
	ordered, err := match.OrderOpenings(book, spec.GetBookOrder(), spec.GetSeed(), int(spec.GetBookStart()))
	if err != nil {
		return nil, apierr.Invalid("openings: %s", brief(err))
	}
	out := make([]*arbiterv1.Opening, len(ordered))
	for i, op := range ordered {
		out[i] = ops[op.ID]
	}
	return out, nil
}

// brief is an error's text cut to a length fit for a message (inner errors
// may quote a whole input).
func brief(err error) string { return clip(err.Error(), 200) }

// clip cuts s to at most limit bytes, at a character boundary, marking the
// cut.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// batchCount is the number of batches of a test: all its pairs, or MaxPairs
// worth of full batches for an SPRT without a cap.
func batchCount(totalPairs, batchPairs int) int {
	if totalPairs > 0 {
		return (totalPairs + batchPairs - 1) / batchPairs
	}
	return MaxPairs / batchPairs
}

// withoutOpenings is spec as snapshots show it: openings dropped, their
// number in OpeningsCount.
func withoutOpenings(spec *arbiterv1.MatchSpec) *arbiterv1.MatchSpec {
	ops := spec.Openings
	spec.Openings = nil
	out := proto.Clone(spec).(*arbiterv1.MatchSpec)
	spec.Openings = ops
	out.OpeningsCount = uint32(len(ops))
	return out
}

// Create implements core.Workload: spec is a *arbiterv1.MatchSpec. Nothing
// is stored when the spec is refused.
func (w *Workload) Create(ctx context.Context, specAny any, submitter string) (core.JobRef, error) {
	in, ok := specAny.(*arbiterv1.MatchSpec)
	if !ok || in == nil {
		return core.JobRef{}, apierr.Invalid("match spec missing")
	}
	if n := len(in.GetOpenings()); n > MaxOpenings {
		// Before the copy: refusing must not cost a copy of the book.
		return core.JobRef{}, apierr.Invalid("openings: %d is more than 1,000,000", n)
	}
	spec := proto.Clone(in).(*arbiterv1.MatchSpec)
	c, err := w.checkSpec(spec, MaxBatchPairs)
	if err != nil {
		w.log.Info("test refused", zap.Error(err))
		return core.JobRef{}, err
	}
	spec.OpeningsCount = 0 // the coordinator's to fill in
	specBytes, err := proto.Marshal(spec)
	if err != nil {
		return core.JobRef{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "encode spec: %v", err)
	}
	t := w.newTest(c)
	if c.params != nil {
		if t.seq, err = sprt.NewSequential(*c.params, int64(c.batchPairs)); err != nil {
			return core.JobRef{}, apierr.Invalid("sprt: %s", brief(err))
		}
	}
	seq, err := seqJSON(t.seq)
	if err != nil {
		return core.JobRef{}, apierr.New(apierr.Internal, apierr.ReasonInternal, "%v", err)
	}
	id := "s" + randomHex(6)
	rec := &store.Job{ID: id, Kind: c.kind, State: store.StateRunning, CreatedAt: w.cfg.Now(), Chess960: spec.GetChess960(),
		RootMoves: []string{}, Submitter: submitter, Priority: spec.GetPriority(), Throughput: spec.GetThroughput()}
	if c.totalPairs > 0 {
		rec.UnitsTotal = t.batches
	}
	t.rec = rec
	w.commitMu.Lock()
	defer w.commitMu.Unlock()
	if err := w.store.CreateTest(ctx, rec, &store.Test{JobID: id, Spec: specBytes, BatchPairs: c.batchPairs, SPRT: seq}); err != nil {
		return core.JobRef{}, apierr.Store(err)
	}
	w.mu.Lock()
	w.tests[id] = t
	w.running = append(w.running, t)
	w.mu.Unlock()
	if w.host != nil {
		w.host.WorkAvailable()
	}
	w.log.Info("test submitted", zap.String(logging.JobID, id), zap.String("kind", c.kind),
		zap.String("engine_a", spec.GetEngineA().GetName()), zap.String("engine_b", spec.GetEngineB().GetName()),
		zap.Int("openings", len(c.openings)), zap.Int("batch_pairs", c.batchPairs), zap.Int("pairs", c.totalPairs),
		zap.Int32("priority", spec.GetPriority()), zap.Float64("throughput", spec.GetThroughput()), zap.String("submitter", submitter))
	return core.JobRef{ID: id, Seq: rec.Seq, Submitter: submitter}, nil
}

// newTest is a running test's memory for a validated spec (rec, seq and
// counts are the caller's).
func (w *Workload) newTest(c *checked) *test {
	return &test{
		spec:       withoutOpenings(c.spec),
		batchPairs: c.batchPairs,
		totalPairs: c.totalPairs,
		batches:    batchCount(c.totalPairs, c.batchPairs),
		workers:    map[string]*testWorker{},
		refused:    map[string]string{},
		openings:   c.openings,
		stored:     map[int]bool{},
		open:       map[int]holder{},
	}
}
