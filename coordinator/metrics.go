package coordinator

import (
	"context"
	"strings"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// The coordinator's metrics follow deploy/prometheus/METRICS.md (the
// contract with the dashboards and the alert rules): change both together.

// Closed label value sets: every combination is exported from start-up on,
// so dashboards and alerts see zeros rather than missing series.
var (
	jobKinds  = []string{"perft", "sprt", "match"}
	jobStates = []string{store.StateRunning, store.StateDone, store.StateFailed, store.StateCancelled}

	unitStates = []string{"queued", "leased", "done"}

	resultOutcomes = []string{"accepted", "duplicate", "mismatch", "discarded"}
)

// Reasons a result is rejected before it counts (arbiter_results_rejected_total).
const (
	RejectMalformed       = "malformed"
	RejectImplausible     = "implausible"
	RejectUnknownUnit     = "unknown_unit"
	RejectStaleLease      = "stale_lease"
	RejectUnauthenticated = "unauthenticated"
)

var rejectReasons = []string{RejectMalformed, RejectImplausible, RejectUnknownUnit, RejectStaleLease, RejectUnauthenticated}

// Game results and terminations (arbiter_games_total). gameSeries lists the
// combinations that can occur; they are initialised to 0.
const (
	GameWhite = "white"
	GameBlack = "black"
	GameDraw  = "draw"
	GameNone  = "none"

	TermCheckmate            = "checkmate"
	TermStalemate            = "stalemate"
	TermRepetition           = "repetition"
	TermFiftyMoves           = "fifty_moves"
	TermInsufficientMaterial = "insufficient_material"
	TermResign               = "resign"
	TermAdjudication         = "adjudication"
	TermTimeForfeit          = "time_forfeit"
	TermIllegalMove          = "illegal_move"
	TermCrash                = "crash"
	TermStalled              = "stalled"
	TermAbandoned            = "abandoned"
)

var gameSeries = map[string][]string{
	TermCheckmate:            {GameWhite, GameBlack},
	TermStalemate:            {GameDraw},
	TermRepetition:           {GameDraw},
	TermFiftyMoves:           {GameDraw},
	TermInsufficientMaterial: {GameDraw},
	TermResign:               {GameWhite, GameBlack},
	TermAdjudication:         {GameWhite, GameBlack, GameDraw},
	TermTimeForfeit:          {GameWhite, GameBlack, GameDraw},
	TermIllegalMove:          {GameWhite, GameBlack},
	TermCrash:                {GameWhite, GameBlack},
	TermStalled:              {GameWhite, GameBlack},
	TermAbandoned:            {GameWhite, GameBlack, GameDraw, GameNone},
}

// pentanomialScores label arbiter_sprt_pairs in Fishtest's order.
var pentanomialScores = [5]string{"0", "0.5", "1", "1.5", "2"}

// metrics are the coordinator's metrics. They register with the Registerer
// from Config (no global registry); with none they still count but are not
// exported.
type metrics struct {
	leasesGranted  prometheus.Counter
	leasesExpired  prometheus.Counter // arbiter_lease_expiries_total
	results        *prometheus.CounterVec
	resultsRefused *prometheus.CounterVec // arbiter_results_rejected_total{reason}
	mismatches     prometheus.Counter
	perftNodes     prometheus.Counter
	games          *prometheus.CounterVec

	grpc  *grpcprom.ServerMetrics
	state *stateCollector
}

func newMetrics(c *Coordinator, reg prometheus.Registerer) *metrics {
	m := &metrics{
		leasesGranted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_leases_granted_total", Help: "Leases granted to workers."}),
		leasesExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_lease_expiries_total", Help: "Leases that expired without a result and were re-queued."}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_results_total", Help: "Unit results received, by outcome."}, []string{"outcome"}),
		resultsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_results_rejected_total", Help: "Results refused before they count, by reason."}, []string{"reason"}),
		mismatches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_verification_mismatches_total",
			Help: "Verified perft units whose second count differed from the first (each is settled by a third run)."}),
		perftNodes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_perft_nodes_total",
			Help: "Perft leaf nodes accepted into job totals (first settlement of a unit; exact totals live in the store)."}),
		games: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_games_total", Help: "Games reported by workers, by result and termination."},
			[]string{"result", "termination"}),

		grpc:  grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram()),
		state: &stateCollector{c: c},
	}
	if c != nil {
		m.state.tests = c.SPRTStates
	}
	for _, o := range resultOutcomes {
		m.results.WithLabelValues(o)
	}
	for _, r := range rejectReasons {
		m.resultsRefused.WithLabelValues(r)
	}
	for term, results := range gameSeries {
		for _, r := range results {
			m.games.WithLabelValues(r, term)
		}
	}
	if reg != nil {
		reg.MustRegister(m.leasesGranted, m.leasesExpired, m.results, m.resultsRefused, m.mismatches, m.perftNodes,
			m.games, m.grpc, m.state)
	}
	return m
}

// reject counts a refused result.
func (m *metrics) reject(reason string) { m.resultsRefused.WithLabelValues(reason).Inc() }

// refuseAs counts a result refused for reason and returns the error for
// the worker (InvalidArgument).
func (c *Coordinator) refuseAs(reason, format string, args ...any) error {
	c.metrics.reject(reason)
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// unitSettled records a committed unit result: a verification mismatch that
// is new (the unit was not disputed before), and the unit's leaf nodes when
// it enters the job totals for the first time.
func (m *metrics) unitSettled(u *unitState, before, after verdict, wasCounted bool) {
	if after.disputed && !before.disputed {
		m.mismatches.Inc()
	}
	if after.settled && !wasCounted {
		m.perftNodes.Add(unitNodes(u, after.counts))
	}
}

// unitNodes is Σ multiplicity × count over a unit's positions, as a float
// (a rate source; exact totals are big.Int in the job).
func unitNodes(u *unitState, counts []uint64) float64 {
	var sum float64
	for i := u.rec.First; i < u.rec.End && i-u.rec.First < len(counts); i++ {
		var mult uint64
		for _, rm := range u.job.positions[i].Mult {
			mult += rm.N
		}
		sum += float64(mult) * float64(counts[i-u.rec.First])
	}
	return sum
}

// ObserveGame counts one game reported by a worker, with result one of
// GameWhite, GameBlack, GameDraw, GameNone and termination one of the Term*
// values (see GameTermination).
func (c *Coordinator) ObserveGame(result, termination string) {
	c.metrics.games.WithLabelValues(result, termination).Inc()
}

// PentanomialElo is the logistic Elo of the pair score of p (0 with no
// pairs): arbiter_sprt_elo, the Elo Fishtest shows beside a pentanomial.
func PentanomialElo(p sprt.Pentanomial) float64 {
	pairs := p.Pairs()
	if pairs == 0 {
		return 0
	}
	points := 0.5*float64(p[1]) + float64(p[2]) + 1.5*float64(p[3]) + 2*float64(p[4])
	return sprt.EloFromScore(points / (2 * float64(pairs)))
}

// observePGNs counts the games of an accepted game-pair batch in
// arbiter_games_total, labelled from each PGN's Result and Termination tags
// and its closing comment (the reason match.WritePGN writes).
func (m *metrics) observePGNs(pgns []string) {
	for _, p := range pgns {
		m.games.WithLabelValues(GameLabels(pgnTag(p, "Result"), pgnTag(p, "Termination"), pgnReason(p))).Inc()
	}
}

// pgnTag returns the value of tag name in a PGN's header, or "".
func pgnTag(pgn, name string) string {
	key := "[" + name + " \""
	i := strings.Index(pgn, key)
	if i < 0 {
		return ""
	}
	rest := pgn[i+len(key):]
	if j := strings.Index(rest, "\"]"); j >= 0 {
		return rest[:j]
	}
	return ""
}

// pgnReason returns the comment just before the game's result token (""
// when the movetext does not end with a comment and a result).
func pgnReason(pgn string) string {
	body := strings.TrimSpace(pgn)
	end := strings.LastIndexByte(body, '}')
	if end < 0 {
		return ""
	}
	switch strings.TrimSpace(body[end+1:]) {
	case "1-0", "0-1", "1/2-1/2", "*":
	default:
		return ""
	}
	start := strings.LastIndexByte(body[:end], '{')
	if start < 0 {
		return ""
	}
	return strings.Join(strings.Fields(body[start+1:end]), " ")
}

// rejectUnauthenticated counts Submit calls the token check refused: it
// sits in the interceptor chain before the token check.
func (m *metrics) rejectUnauthenticated(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err != nil && info.FullMethod == arbiterv1.WorkerService_Submit_FullMethodName &&
		status.Code(err) == codes.Unauthenticated {
		m.reject(RejectUnauthenticated)
	}
	return resp, err
}

// stateCollector exports gauges computed from the coordinator's state at
// scrape time: jobs by kind and state, units of running jobs by state,
// connected workers, and the SPRT gauges of every running test (from
// SPRTStates: a test's series exist while it runs and are gone once it
// ends, so the label set stays bounded by the running tests).
type stateCollector struct {
	c     *Coordinator
	tests func() []SPRTState
}

var (
	descJobs  = prometheus.NewDesc("arbiter_jobs", "Jobs in the store by kind and state.", []string{"kind", "state"}, nil)
	descUnits = prometheus.NewDesc("arbiter_units",
		"Work units of running jobs: waiting for a worker (queued), leased to one, finished (done).", []string{"state"}, nil)
	descWorkers = prometheus.NewDesc("arbiter_workers_connected",
		"Workers holding a live session (a lease poll or heartbeat within the lease duration).", nil, nil)

	descLLR   = prometheus.NewDesc("arbiter_sprt_llr", "Current log-likelihood ratio of a running SPRT test.", []string{"test"}, nil)
	descLower = prometheus.NewDesc("arbiter_sprt_llr_lower_bound", "Lower LLR bound of a running SPRT test, ln(beta/(1-alpha)) (accept H0).", []string{"test"}, nil)
	descUpper = prometheus.NewDesc("arbiter_sprt_llr_upper_bound", "Upper LLR bound of a running SPRT test, ln((1-beta)/alpha) (accept H1).", []string{"test"}, nil)
	descElo   = prometheus.NewDesc("arbiter_sprt_elo", "Logistic Elo of a running test from its pentanomial score.", []string{"test"}, nil)
	descGames = prometheus.NewDesc("arbiter_sprt_games", "Games a running test has counted (2 x pairs).", []string{"test"}, nil)
	descPairs = prometheus.NewDesc("arbiter_sprt_pairs", "Game pairs of a running test by the new engine's pair score (pentanomial).", []string{"test", "score"}, nil)
)

func (s *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descJobs
	ch <- descUnits
	ch <- descWorkers
	for _, d := range []*prometheus.Desc{descLLR, descLower, descUpper, descElo, descGames, descPairs} {
		ch <- d
	}
}

func (s *stateCollector) Collect(ch chan<- prometheus.Metric) {
	c := s.c
	type ks struct{ kind, state string }
	jobs := make(map[ks]int)
	for _, k := range jobKinds {
		for _, st := range jobStates {
			jobs[ks{k, st}] = 0
		}
	}
	units := make(map[string]int, len(unitStates))
	c.mu.Lock()
	for _, j := range c.order {
		jobs[ks{j.rec.Kind, j.rec.State}]++
		if j.rec.State != store.StateRunning {
			continue
		}
		for _, u := range j.units {
			switch {
			case u.v.settled:
				units["done"]++
			case len(c.leases.ForUnit(u.rec.ID)) > 0:
				units["leased"]++
			default:
				units["queued"]++
			}
		}
	}
	now := c.cfg.Now()
	connected := 0
	for _, w := range c.workers {
		if !w.lastSeen.IsZero() && now.Sub(w.lastSeen) <= c.cfg.LeaseDuration {
			connected++
		}
	}
	c.mu.Unlock()
	for k, n := range jobs {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(n), k.kind, k.state)
	}
	for _, st := range unitStates {
		ch <- prometheus.MustNewConstMetric(descUnits, prometheus.GaugeValue, float64(units[st]), st)
	}
	ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(connected))
	if s.tests == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, t := range s.tests() {
		// LLR and bounds for SPRT tests; Elo, games and pentanomial for
		// fixed-games matches too (they have no LLR).
		if t.Kind == KindSPRT {
			gauge(descLLR, t.LLR, t.TestID)
			gauge(descLower, t.Lower, t.TestID)
			gauge(descUpper, t.Upper, t.TestID)
		}
		p := sprt.Pentanomial(t.Pentanomial)
		gauge(descElo, PentanomialElo(p), t.TestID)
		gauge(descGames, float64(2*p.Pairs()), t.TestID)
		for i, score := range pentanomialScores {
			gauge(descPairs, float64(p[i]), t.TestID, score)
		}
	}
}

// Ready reports whether the coordinator serves work: its store is loaded
// (New returned) and it is not closed. The HTTP /readyz adds "gRPC serving".
func (c *Coordinator) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errClosed
	}
	return nil
}

var errClosed = status.Error(codes.Unavailable, "coordinator closed")
