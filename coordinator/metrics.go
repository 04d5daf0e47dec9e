package coordinator

import "github.com/prometheus/client_golang/prometheus"

// metrics are the coordinator's own counters. They register with the
// Registerer from Config (no global registry); with none they still count
// but are not exported. More metrics hang off this struct.
type metrics struct {
	leasesGranted  prometheus.Counter
	leasesExpired  prometheus.Counter
	results        *prometheus.CounterVec
	resultsRefused prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		leasesGranted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_leases_granted_total", Help: "Leases granted to workers."}),
		leasesExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_leases_expired_total", Help: "Leases that expired without a result and were re-issued."}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_results_total", Help: "Unit results received, by outcome."}, []string{"outcome"}),
		resultsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_results_refused_total", Help: "Results refused as malformed or impossible."}),
	}
	if reg != nil {
		reg.MustRegister(m.leasesGranted, m.leasesExpired, m.results, m.resultsRefused)
	}
	return m
}
