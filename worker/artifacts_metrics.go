package worker

import (
	"github.com/prometheus/client_golang/prometheus"
)

type artifactMetrics struct {
	downloads *prometheus.CounterVec
	builds    *prometheus.CounterVec
	benches   *prometheus.CounterVec
	evictions prometheus.Counter
}

func newArtifactMetrics(reg prometheus.Registerer) *artifactMetrics {
	m := &artifactMetrics{
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_worker_artifact_fetches_total",
			Help: "Uploaded engines and nets this worker needed, by source: download (from the coordinator), cache."}, []string{"source"}),
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_worker_artifact_builds_total",
			Help: "Source builds on this worker by outcome: ok, cached, failed."}, []string{"outcome"}),
		benches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "arbiter_worker_bench_checks_total",
			Help: "Bench signature checks of uploaded engines by outcome: match, unchecked, mismatch."}, []string{"outcome"}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_worker_artifact_evictions_total",
			Help: "Cache entries (downloads, builds) removed to stay under the cache size."}),
	}
	for _, s := range []string{"download", "cache"} {
		m.downloads.WithLabelValues(s)
	}
	for _, s := range []string{"ok", "cached", "failed"} {
		m.builds.WithLabelValues(s)
	}
	for _, s := range []string{"match", "unchecked", "mismatch"} {
		m.benches.WithLabelValues(s)
	}
	if reg != nil {
		reg.MustRegister(m.downloads, m.builds, m.benches, m.evictions)
	}
	return m
}
