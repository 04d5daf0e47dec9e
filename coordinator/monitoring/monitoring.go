// Package monitoring is what a Prometheus needs from Arbiter and what the
// pages read back from one: the alert rules (alerts.yml, embedded here and
// the one copy: deploy/prometheus/alerts.yml is a link to it), the key
// panels of the overview (their titles and PromQL, which scripts/dashgen
// builds the Grafana dashboards from and the coordinator's /monitor page
// queries), the Prometheus configuration `arbiter up --prometheus` writes,
// and a small client of Prometheus's HTTP query API.
//
// Invariant: nothing Prometheus answers is trusted as a size: a reply is
// read up to MaxReply bytes, and at most MaxSeries series of MaxPoints
// points each are kept.
package monitoring

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Alerts are the Arbiter alert rules (a Prometheus rule file).
//
//go:embed alerts.yml
var Alerts []byte

// ScrapeInterval is the scrape interval of the shipped Prometheus
// configurations, and Config's unless told another.
const ScrapeInterval = 15 * time.Second

// Panel is one key figure of the overview: a stat (one number) or, with
// PerSeries, one figure per series (a legend label's value each).
type Panel struct {
	Title       string
	Description string
	// Expr is the panel's PromQL as the dashboards hold it (with
	// $__rate_interval; a selector is appended by the SPRT dashboard).
	Expr string
	// Legend names a series (Grafana's legend format, e.g. "{{test}}").
	Legend string
	// Unit is Grafana's unit ("none", "short").
	Unit string
	// PerSeries: one figure per series (per-test LLR), not a total.
	PerSeries bool
	// Label is the series label a PerSeries figure is named by.
	Label string
}

// The key panels, by name: scripts/dashgen builds the dashboards' panels
// from these, and /monitor shows them.
var (
	CoordinatorUp = Panel{Title: "Coordinator up", Description: "Coordinators whose /metrics Prometheus read at the last scrape (arbiter_coordinator_leader is on every one); 0: none answers.",
		Expr: `count(arbiter_coordinator_leader) or vector(0)`, Legend: "coordinators", Unit: "none"}
	WorkersConnected = Panel{Title: "Workers connected", Description: "Workers that leased or heartbeat within the lease duration. 0 means nothing computes (alert ArbiterNoWorkers).",
		Expr: `arbiter_workers_connected`, Unit: "none"}
	RunningJobs = Panel{Title: "Running jobs", Description: "Jobs of every kind in state running.",
		Expr: `sum(arbiter_jobs{state="running"})`, Unit: "none"}
	UnitsQueued = Panel{Title: "Units queued", Description: "Units of running jobs waiting for a worker. Growing while done stays flat: a stalled job (alert ArbiterJobStalled).",
		Expr: `arbiter_units{state="queued"}`, Unit: "none"}
	PerftNodes = Panel{Title: "Perft nodes/s", Description: "Leaf nodes accepted into perft totals per second, cluster-wide.",
		Expr: `rate(arbiter_perft_nodes_total[$__rate_interval])`, Unit: "short"}
	GamesPerMinute = Panel{Title: "Games/min", Description: "Games reported by workers per minute, cluster-wide.",
		Expr: `sum(rate(arbiter_games_total[$__rate_interval])) * 60`, Unit: "short"}
	TestLLR = Panel{Title: "Tests now", Description: "Each running test's latest LLR.",
		Expr: `arbiter_sprt_llr`, Unit: "none", PerSeries: true, Label: "test"}
)

// Key are the panels /monitor shows, in its order.
func Key() []Panel {
	return []Panel{CoordinatorUp, WorkersConnected, RunningJobs, UnitsQueued, PerftNodes, GamesPerMinute, TestLLR}
}

// Query is a panel's expression as Prometheus runs it outside Grafana,
// on series scraped every scrape (0: ScrapeInterval): $__rate_interval
// is four scrapes, as Grafana makes it.
func (p Panel) Query(scrape time.Duration) string {
	if scrape <= 0 {
		scrape = ScrapeInterval
	}
	return strings.ReplaceAll(p.Expr, "$__rate_interval", promDuration(4*scrape))
}

// promDuration is d in Prometheus's duration syntax (whole seconds, or
// milliseconds).
func promDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(max(d.Milliseconds(), 1), 10) + "ms"
}

// Job is the scrape job name of a coordinator in the shipped
// configuration, which the alert rules name (up{job="arbiter-coordinator"}).
const Job = "arbiter-coordinator"

// Config is a Prometheus configuration scraping the coordinator whose
// /metrics is on target (host:port; arbiter up's workers export theirs
// on it too, label worker) every scrape (0: ScrapeInterval) and loading the alert rules from rules (a
// path relative to the configuration's directory, or absolute).
func Config(target, rules string, scrape time.Duration) string {
	if scrape <= 0 {
		scrape = ScrapeInterval
	}
	return fmt.Sprintf(`# Written by arbiter up --prometheus: Prometheus scraping this farm.
# Point your own Prometheus at a coordinator the same way: a job named
# %[1]s (the alert rules name it) scraping its --http port, and
# arbiter worker --http ports as job arbiter-worker (deploy/prometheus).
global:
  scrape_interval: %[2]s
  evaluation_interval: %[2]s

rule_files:
  - %[3]q

scrape_configs:
  - job_name: %[1]s
    metrics_path: /metrics
    static_configs:
      - targets: [%[4]q]
`, Job, promDuration(scrape), rules, target)
}
