package worker

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/arbiter-chess/arbiter/client/clusterclient"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// The worker's metrics follow deploy/prometheus/METRICS.md. They register
// with Config.Registerer (no global registry); with none they are kept but
// not exported.
type metrics struct {
	games    prometheus.Counter
	restarts prometheus.Counter
	leaseRTT prometheus.Histogram

	mu        sync.Mutex
	threads   int
	recent    []unitRate // last finished units, newest last, at most threads
	connected bool       // the last lease call reached the coordinator
	now       func() time.Time
}

type unitRate struct {
	at      time.Time
	elapsed time.Duration
	rate    float64
}

// Describe-time descriptor of the computed gauge.
var descNodesPerSecond = prometheus.NewDesc("arbiter_worker_nodes_per_second",
	"Perft nodes per second over the worker's last finished units: the sum over its last finished unit per thread (0 when idle).",
	nil, nil)

func newMetrics(reg prometheus.Registerer, threads int) *metrics {
	m := &metrics{
		games: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_worker_games_total", Help: "Games this worker played to an end."}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "arbiter_worker_engine_restarts_total", Help: "Engine processes restarted after a crash, hang or failed start."}),
		leaseRTT: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "arbiter_worker_lease_rtt_seconds",
			Help:    "Round-trip time of lease calls to the coordinator (long-poll wait excluded).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 10), // 0.5 ms .. 1.9 s
		}),
		threads: max(threads, 1),
		now:     time.Now,
	}
	if reg != nil {
		reg.MustRegister(m.games, m.restarts, m.leaseRTT, m)
	}
	return m
}

// Describe implements prometheus.Collector (the nodes/s gauge).
func (m *metrics) Describe(ch chan<- *prometheus.Desc) { ch <- descNodesPerSecond }

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descNodesPerSecond, prometheus.GaugeValue, m.nodesPerSecond())
}

// nodesPerSecond sums the rates of the last finished unit of each thread
// (the last `threads` units); a unit stops counting once its thread has
// been idle for longer than the unit took (at least 5 s), so an idle
// worker shows 0.
func (m *metrics) nodesPerSecond() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var sum float64
	for _, u := range m.recent {
		if now.Sub(u.at) <= max(5*time.Second, 2*u.elapsed) {
			sum += u.rate
		}
	}
	return sum
}

// unitDone records a finished unit that counted nodes (Host.CountNodes:
// perft's, kinds/perft).
func (m *metrics) unitDone(nodes uint64, elapsed time.Duration) {
	if elapsed <= 0 {
		elapsed = time.Microsecond
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recent = append(m.recent, unitRate{at: m.now(), elapsed: elapsed, rate: float64(nodes) / elapsed.Seconds()})
	if len(m.recent) > m.threads {
		m.recent = m.recent[len(m.recent)-m.threads:]
	}
}

// leaseCall records a Lease call that began at start and asked the
// coordinator to hold it up to wait for work. An empty answer came back
// after the long poll, so the wait is taken off; a granted lease is
// counted whole (with work queued it comes back at once).
func (m *metrics) leaseCall(start time.Time, wait time.Duration, resp *arbiterv1.LeaseResponse, err error) {
	d := time.Since(start)
	m.mu.Lock()
	m.connected = err == nil
	m.mu.Unlock()
	if err != nil {
		return
	}
	if resp.GetLease() == nil && d >= wait {
		d -= wait
	}
	m.leaseRTT.Observe(d.Seconds())
}

// heartbeatCall records whether a heartbeat reached the coordinator, so
// that a worker busy with long units (no lease calls) still notices when
// its coordinator goes away, and when it comes back.
func (m *metrics) heartbeatCall(err error) {
	m.mu.Lock()
	m.connected = err == nil || clusterclient.KindOf(err) != clusterclient.Unreachable
	m.mu.Unlock()
}

// GamePlayed counts a game this worker played to an end.
func (w *Worker) GamePlayed() { w.metrics.games.Inc() }

// EngineRestarted counts an engine process restarted after a crash, a hang
// or a failed start.
func (w *Worker) EngineRestarted() { w.metrics.restarts.Inc() }

// Ready reports whether the worker is connected to its coordinator: it is
// registered and its last lease or heartbeat call got an answer. It never
// waits on a call in flight.
func (w *Worker) Ready() error {
	if w.workerID() == "" {
		return errors.New("not registered with the coordinator yet")
	}
	w.metrics.mu.Lock()
	defer w.metrics.mu.Unlock()
	if !w.metrics.connected {
		return errors.New("coordinator unreachable (last call failed)")
	}
	return nil
}

// gamesPlayed counts games played to an end and engine processes
// restarted (Host.CountGames).
func (m *metrics) gamesPlayed(games, restarts uint64) {
	m.games.Add(float64(games))
	m.restarts.Add(float64(restarts))
}
