package gamejob

import (
	"fmt"

	"github.com/arbiter-chess/arbiter/internal/gamelabel"

	"github.com/prometheus/client_golang/prometheus"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/sprt"
)

// The workload's metrics follow deploy/prometheus/METRICS.md (the contract
// with the dashboards and the alert rules): change both together.

// gameSeries lists, by termination, the results a game can have: the
// series of arbiter_games_total, every one exported from start-up. A
// reported game outside them (a draw by checkmate) is a malformed result.
var gameSeries = gamelabel.Series()

// gameLabel is one game's labels of arbiter_games_total.
type gameLabel struct{ result, term string }

// GameLabels maps a game's reported outcome to the labels of
// arbiter_games_total; ok is false for an unset or unknown value, or a
// combination no game can have.
func GameLabels(r arbiterv1.GameResult, t arbiterv1.GameTermination) (result, termination string, ok bool) {
	l, err := labelOf(r, t)
	return l.result, l.term, err == nil
}

func labelOf(r arbiterv1.GameResult, t arbiterv1.GameTermination) (gameLabel, error) {
	// The wire's enums must be ones this coordinator knows: gamelabel maps
	// unknown values to none/abandoned for display, but a result that
	// counts must say what happened.
	if _, known := arbiterv1.GameResult_name[int32(r)]; !known || r == arbiterv1.GameResult_GAME_RESULT_UNSPECIFIED {
		return gameLabel{}, fmt.Errorf("result %v is not a game result", r)
	}
	if _, known := arbiterv1.GameTermination_name[int32(t)]; !known || t == arbiterv1.GameTermination_GAME_TERMINATION_UNSPECIFIED {
		return gameLabel{}, fmt.Errorf("termination %v is not a game termination", t)
	}
	result, term := gamelabel.Result(r), gamelabel.Termination(t)
	for _, allowed := range gameSeries[term] {
		if allowed == result {
			return gameLabel{result, term}, nil
		}
	}
	return gameLabel{}, fmt.Errorf("result %s cannot come from termination %s", result, term)
}

// pentanomialScores label arbiter_sprt_pairs in Fishtest's order.
var pentanomialScores = [5]string{"0", "0.5", "1", "1.5", "2"}

type metrics struct {
	games *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		games: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_games_total", Help: "Games reported by workers, by result and termination."},
			[]string{"result", "termination"}),
	}
	for term, results := range gameSeries {
		for _, r := range results {
			m.games.WithLabelValues(r, term)
		}
	}
	return m
}

// register registers the counters and the SPRT gauges of w's running tests.
func (m *metrics) register(reg prometheus.Registerer, w *Workload) {
	if reg != nil {
		reg.MustRegister(m.games, &sprtCollector{states: w.SPRTStates})
	}
}

// observeGames counts the games of an accepted batch.
func (m *metrics) observeGames(games []gameLabel) {
	for _, g := range games {
		m.games.WithLabelValues(g.result, g.term).Inc()
	}
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
