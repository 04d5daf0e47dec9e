package perft

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/engine"
)

// metrics follow deploy/prometheus/METRICS.md.
type metrics struct {
	mismatches prometheus.Counter
	perftNodes prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		mismatches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_verification_mismatches_total",
			Help: "Verified perft units whose second count differed from the first (each is settled by a third run)."}),
		perftNodes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_perft_nodes_total",
			Help: "Perft leaf nodes accepted into job totals (first settlement of a unit; exact totals live in the store)."}),
	}
	if reg != nil {
		reg.MustRegister(m.mismatches, m.perftNodes)
	}
	return m
}

// unitSettled records a committed unit result: a verification mismatch that
// is new (the unit was not disputed before), and the unit's leaf nodes when
// it enters the job totals for the first time.
func (m *metrics) unitSettled(u *unit, before, after verdict, wasCounted bool) {
	if after.disputed && !before.disputed {
		m.mismatches.Inc()
	}
	if after.settled && !wasCounted {
		m.perftNodes.Add(unitNodes(u, after.counts))
	}
}

// unitNodes is Σ multiplicity × count over a unit's positions, as a float
// (a rate source; exact totals are big.Int in the job).
func unitNodes(u *unit, counts []engine.Count) float64 {
	var sum float64
	for i := u.rec.First; i < u.rec.End && i-u.rec.First < len(counts); i++ {
		var mult uint64
		for _, rm := range u.job.positions[i].Mult {
			mult += rm.N
		}
		sum += float64(mult) * counts[i-u.rec.First].Float()
	}
	return sum
}
