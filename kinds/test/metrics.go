package test

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// The workload's metrics follow deploy/prometheus/METRICS.md (the contract
// with the dashboards and the alert rules): change both together.

// gameSeries lists, by termination, the results a game can have: the
// series of arbiter_games_total (gamepair.GameSeries).
var gameSeries = gamepair.GameSeries

// GameLabels maps a game's reported outcome to the labels of
// arbiter_games_total; ok is false for an unset or unknown value, or a
// combination no game can have.
func GameLabels(r arbiterv1.GameResult, t arbiterv1.GameTermination) (result, termination string, ok bool) {
	return gamepair.GameLabels(r, t)
}

// pentanomialScores label arbiter_sprt_pairs in Fishtest's order.
var pentanomialScores = [5]string{"0", "0.5", "1", "1.5", "2"}

type metrics struct {
	games       *gamepair.GameCounter
	crossChecks *gamepair.CrossCheckCounter
}

// newMetrics uses games, or a counter of its own when nil.
func newMetrics(games *gamepair.GameCounter) *metrics {
	if games == nil {
		games = gamepair.NewGameCounter()
	}
	return &metrics{games: games, crossChecks: gamepair.NewCrossCheckCounter()}
}

// register registers the SPRT gauges of w's running tests, and the games
// counter when the workload made it (own).
func (m *metrics) register(reg prometheus.Registerer, own bool, w *Workload) {
	if reg == nil {
		return
	}
	if own {
		reg.MustRegister(m.games.Vec())
	}
	reg.MustRegister(&sprtCollector{states: w.SPRTStates}, m.crossChecks.Vec())
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

var (
	descLLR   = prometheus.NewDesc("arbiter_sprt_llr", "Current log-likelihood ratio of a running SPRT test.", []string{"test"}, nil)
	descLower = prometheus.NewDesc("arbiter_sprt_llr_lower_bound", "Lower LLR bound of a running SPRT test, ln(beta/(1-alpha)) (accept H0).", []string{"test"}, nil)
	descUpper = prometheus.NewDesc("arbiter_sprt_llr_upper_bound", "Upper LLR bound of a running SPRT test, ln((1-beta)/alpha) (accept H1).", []string{"test"}, nil)
	descElo   = prometheus.NewDesc("arbiter_sprt_elo", "Logistic Elo of a running test from its pentanomial score.", []string{"test"}, nil)
	descGames = prometheus.NewDesc("arbiter_sprt_games", "Games a running test has counted (2 x pairs).", []string{"test"}, nil)
	descPairs = prometheus.NewDesc("arbiter_sprt_pairs", "Game pairs of a running test by the new engine's pair score (pentanomial).", []string{"test", "score"}, nil)
)

// sprtCollector exports the SPRT gauges of every running test at scrape
// time: a test's series exist while it runs and are gone once it ends, so
// the label set stays bounded by the running tests.
type sprtCollector struct {
	states func() []SPRTState
}

func (s *sprtCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descLLR, descLower, descUpper, descElo, descGames, descPairs} {
		ch <- d
	}
}

func (s *sprtCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, t := range s.states() {
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
