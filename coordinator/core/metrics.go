package core

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// The core's metrics follow deploy/prometheus/METRICS.md (the contract with
// the dashboards and the alert rules): change both together.

// JobStates are the stored job states, every one exported from start-up.
var JobStates = []string{"running", "done", "failed", "cancelled"}

// UnitStates label arbiter_units.
var UnitStates = []string{"queued", "leased", "done"}

var resultVerdicts = []Verdict{Accepted, Duplicate, Mismatch, Discarded}

type metrics struct {
	leasesGranted prometheus.Counter
	leasesExpired prometheus.Counter
	results       *prometheus.CounterVec
	rejected      *prometheus.CounterVec
}

func newMetrics(c *Core, reg prometheus.Registerer) *metrics {
	m := &metrics{
		leasesGranted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_leases_granted_total", Help: "Leases granted to workers."}),
		leasesExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_lease_expiries_total", Help: "Leases that expired without a result and were re-queued."}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_results_total", Help: "Unit results received, by outcome."}, []string{"outcome"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "arbiter_results_rejected_total", Help: "Results refused before they count, by reason."}, []string{"reason"}),
	}
	for _, v := range resultVerdicts {
		m.results.WithLabelValues(v.String())
	}
	for _, r := range RejectReasons {
		m.rejected.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.leasesGranted, m.leasesExpired, m.results, m.rejected, &stateCollector{c: c})
	}
	return m
}

func (m *metrics) reject(reason string) { m.rejected.WithLabelValues(reason).Inc() }

// Reject counts a result refused outside the core (the authentication
// layer counts unauthenticated submits here).
func (c *Core) Reject(reason string) { c.metrics.reject(reason) }

var (
	descJobs  = prometheus.NewDesc("arbiter_jobs", "Jobs in the store by kind and state.", []string{"kind", "state"}, nil)
	descUnits = prometheus.NewDesc("arbiter_units",
		"Work units of running jobs: waiting for a worker (queued), leased to one, finished (done).", []string{"state"}, nil)
	descWorkers = prometheus.NewDesc("arbiter_workers_connected",
		"Workers holding a live session (a lease poll or heartbeat within the lease duration).", nil, nil)
)

// stateCollector computes gauges from the core's and workloads' state at
// scrape time.
type stateCollector struct{ c *Core }

func (s *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descJobs
	ch <- descUnits
	ch <- descWorkers
}

func (s *stateCollector) Collect(ch chan<- prometheus.Metric) {
	c := s.c
	jobs := map[JobKey]int{}
	units := map[string]int{}
	for _, st := range UnitStates {
		units[st] = 0
	}
	for _, wl := range c.workloads {
		st := wl.Stats()
		for k, n := range st.Jobs {
			jobs[k] += n
		}
		for k, n := range st.Units {
			units[k] += n
		}
	}
	c.mu.Lock()
	now := c.cfg.Now()
	connected := 0
	for _, w := range c.workers {
		if !w.lastSeen.IsZero() && now.Sub(w.lastSeen) <= c.cfg.LeaseDuration {
			connected++
		}
	}
	c.mu.Unlock()
	keys := make([]JobKey, 0, len(jobs))
	for k := range jobs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Kind+keys[i].State < keys[j].Kind+keys[j].State })
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(descJobs, prometheus.GaugeValue, float64(jobs[k]), k.Kind, k.State)
	}
	for st, n := range units {
		ch <- prometheus.MustNewConstMetric(descUnits, prometheus.GaugeValue, float64(n), st)
	}
	ch <- prometheus.MustNewConstMetric(descWorkers, prometheus.GaugeValue, float64(connected))
}
