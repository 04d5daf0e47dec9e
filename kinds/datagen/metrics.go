package datagen

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the workload's series. Counters carry no job label: a
// farm's datasets are few and long, and the dashboard reads the farm's
// rate; per-job figures are in status and on the dataset page.
type metrics struct {
	positions  prometheus.Counter
	games      prometheus.Counter
	duplicates prometheus.Counter
	shardBytes prometheus.Counter
}

func newMetrics(w *Workload, reg prometheus.Registerer) *metrics {
	m := &metrics{
		positions: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_datagen_positions_total",
			Help: "Training positions counted into datasets (after duplicates are dropped and the last shard is cut)."}),
		games: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_datagen_games_total",
			Help: "Self-play games of accepted dataset shards."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_datagen_duplicates_total",
			Help: "Positions of accepted shards that repeated an earlier position of their dataset."}),
		shardBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "arbiter_datagen_shard_bytes_total",
			Help: "Bytes of accepted dataset shards (compressed, as stored)."}),
	}
	if reg != nil {
		running := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "arbiter_datagen_running_jobs",
			Help: "Datasets being generated now."}, func() float64 {
			w.mu.Lock()
			defer w.mu.Unlock()
			return float64(len(w.running))
		})
		reg.MustRegister(m.positions, m.games, m.duplicates, m.shardBytes, running)
	}
	return m
}

func (m *metrics) shard(r *shardRow) {
	m.positions.Add(float64(r.Positions))
	m.games.Add(float64(r.Games))
	m.duplicates.Add(float64(r.Stats.Duplicates))
	m.shardBytes.Add(float64(r.Bytes))
}
