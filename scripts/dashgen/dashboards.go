package dashgen

import (
	"github.com/arbiter-chess/arbiter/coordinator/monitoring"
	"github.com/arbiter-chess/arbiter/coordinator/workload"
	_ "github.com/arbiter-chess/arbiter/kinds/install" // every kind's row
)

// Dashboards are the Arbiter dashboards, by file name under dashboards/.
// Every query uses only metrics of deploy/prometheus/METRICS.md that the
// code exports (and Prometheus's own `up`).
func Dashboards() map[string]*Dashboard {
	return map[string]*Dashboard{
		"arbiter-overview.json": Overview(),
		"arbiter-perft.json":    Perft(),
		"arbiter-sprt.json":     SPRT(),
		"arbiter-workers.json":  Workers(),
	}
}

const rate = "[$__rate_interval]"

// incidents are the game terminations that point at an engine or a worker
// rather than at chess.
const incidents = `termination=~"time_forfeit|crash|illegal_move|stalled"`

// Overview is the cluster at a glance.
func Overview() *Dashboard {
	b := newDashboard("arbiter-overview", "Arbiter / Cluster overview",
		"Is the cluster up, working and keeping up: coordinator, workers, jobs, units, results and RPCs.")
	b.row("Health")
	// From a series every coordinator exports itself, not up{job=...}:
	// that needs the scrape job to carry one particular name, and a
	// hand-written Prometheus config rarely does. A coordinator whose
	// scrape fails goes stale at once, so the count drops to 0.
	// The key figures, from the table /monitor reads too (package
	// monitoring).
	b.add(keyStat(monitoring.CoordinatorUp, "red", 1, "green"), 4, 4)
	b.add(keyStat(monitoring.WorkersConnected, "red", 1, "green"), 4, 4)
	b.add(keyStat(monitoring.RunningJobs, "blue"), 4, 4)
	b.add(keyStat(monitoring.UnitsQueued, "blue"), 4, 4)
	b.add(keyStat(monitoring.PerftNodes, "blue"), 4, 4)
	b.add(keyStat(monitoring.GamesPerMinute, "blue"), 4, 4)

	b.row("Work")
	b.add(bars("Jobs by kind and state", "Every job in the store, by kind and state.", "none",
		q(`sum by (kind, state) (arbiter_jobs)`, "{{kind}} {{state}}")), 8, 8)
	b.add(stacked("Units by state", "Work units of running jobs: queued (waiting), leased (being computed), done (accepted).", "none",
		q(`arbiter_units`, "{{state}}")), 8, 8)
	b.add(timeseries("Leases", "Leases granted per second, and leases that expired without a result (a worker died or stalled; the unit is re-queued).", "ops",
		q(`rate(arbiter_leases_granted_total`+rate+`)`, "granted"),
		q(`rate(arbiter_lease_expiries_total`+rate+`)`, "expired")), 8, 8)

	b.row("Results")
	b.add(timeseries("Results by outcome", "Unit results received per second: accepted, duplicate (a replay, compared not added), mismatch (verification disagreed), discarded (job already over).", "ops",
		q(`sum by (outcome) (rate(arbiter_results_total`+rate+`))`, "{{outcome}}")), 12, 8)
	b.add(timeseries("Results rejected by reason", "Results refused before they count: malformed, implausible (a count outside what the position allows), unknown unit, stale lease, unauthenticated. Any is worth a look (alert ArbiterResultsRejected).", "ops",
		q(`sum by (reason) (rate(arbiter_results_rejected_total`+rate+`))`, "{{reason}}")), 12, 8)

	// Each kind's own row, as it registered it (workload.Kind.Dashboard).
	kindRows(b)

	// Every coordinator exports these: one on SQLite leads alone (term
	// 1, nothing relayed); several on PostgreSQL elect one (docs/ha.md).
	b.row("Coordinators (several on PostgreSQL)")
	b.add(timeseries("Leader", "1 for the coordinator that leads (serves workers and clients), 0 for those standing by. Exactly one should be 1; none for longer than the leader timeout means no coordinator can reach the database.", "none",
		q(`arbiter_coordinator_leader`, "{{instance}}")), 6, 6)
	b.add(timeseries("Leadership changes", "New leaders taking over (term changes), as the coordinator that saw most of them counts them. Each is a leader that died, was paused, lost the database or was replaced.", "none",
		q(`max(increase(arbiter_coordinator_leadership_changes_total`+rate+`))`, "changes")), 6, 6)
	b.add(timeseries("Database latency p99", "99th percentile of the round trip of each coordinator's check query to its database (PostgreSQL or SQLite; once per election interval, a second by default).", "s",
		q(`histogram_quantile(0.99, sum by (le, instance) (rate(arbiter_coordinator_database_latency_seconds_bucket`+rate+`)))`, "{{instance}}")), 6, 6)
	b.add(timeseries("Database reachable", "1 when the coordinator's last check of the database was answered. 0 on the leader: writes fail and workers retry; past half the leader timeout it gives up the lead.", "none",
		q(`arbiter_coordinator_database_up`, "{{instance}}")), 6, 6)
	b.add(timeseries("Relayed to the leader", "Calls and page requests followers relay to the leader (docs/ha.md), by protocol and outcome. Unavailable or refused rising: the leader is changing or unreachable from the followers.", "reqps",
		q(`sum by (protocol, code) (rate(arbiter_coordinator_forwarded_calls_total`+rate+`))`, "{{protocol}} {{code}}")), 6, 6)
	b.add(timeseries("Relaying now", "Calls a follower is relaying at this moment (long polls and streams included), against --forward-max-calls.", "none",
		q(`arbiter_coordinator_forwarded_in_flight`, "{{instance}}")), 6, 6)

	b.row("gRPC")
	b.add(timeseries("RPC rate by method", "gRPC calls completed per second on the coordinator, by method.", "reqps",
		q(`sum by (grpc_service, grpc_method) (rate(grpc_server_handled_total`+rate+`))`, "{{grpc_method}}")), 8, 8)
	b.add(timeseries("RPC errors by code", "gRPC calls that ended with a status other than OK, by method and code. NotFound on Submit and Unauthenticated deserve attention; Canceled during shutdowns is normal.", "reqps",
		q(`sum by (grpc_method, grpc_code) (rate(grpc_server_handled_total{grpc_code!="OK"}`+rate+`))`, "{{grpc_method}} {{grpc_code}}")), 8, 8)
	b.add(timeseries("RPC latency p99 by method", "99th percentile of the time the coordinator took to answer, by method. Lease is a long poll: it waits up to its wait time when there is no work.", "s",
		q(`histogram_quantile(0.99, sum by (le, grpc_method) (rate(grpc_server_handling_seconds_bucket`+rate+`)))`, "{{grpc_method}}")), 8, 8)
	return b.build()
}

// Perft is the perft jobs dashboard.
func Perft() *Dashboard {
	b := newDashboard("arbiter-perft", "Arbiter / Perft jobs",
		"Perft jobs: throughput, progress, verification and the quality of worker results.")
	b.row("Jobs")
	b.add(stat("Perft jobs running", "Perft jobs in state running.", "none",
		q(`sum(arbiter_jobs{kind="perft", state="running"})`, ""), "blue"), 6, 4)
	b.add(stat("Perft jobs failed", "Perft jobs that failed: a unit ran out of runs without a majority (a broken worker or move generator).", "none",
		q(`sum(arbiter_jobs{kind="perft", state="failed"})`, ""), "green", 1, "red"), 6, 4)
	b.add(stat("Units done", "Share of the units of running jobs that are finished.", "percentunit",
		q(`sum(arbiter_units{state="done"}) / sum(arbiter_units)`, ""), "blue"), 6, 4)
	b.add(stat("Verification mismatches (1h)", "Verified units whose second count differed from the first in the last hour; each is settled by a third run on another worker (alert ArbiterVerificationMismatch).", "none",
		q(`increase(arbiter_verification_mismatches_total[1h])`, ""), "green", 1, "red"), 6, 4)
	b.add(bars("Perft jobs by state", "Perft jobs in the store by state.", "none",
		q(`sum by (state) (arbiter_jobs{kind="perft"})`, "{{state}}")), 8, 8)

	b.add(timeseries("Nodes counted per second", "Perft leaf nodes accepted into job totals per second (multiplicity × count of each newly settled unit). Exact totals live in the store.", "short",
		q(`rate(arbiter_perft_nodes_total`+rate+`)`, "accepted")), 16, 8)

	b.row("Progress")
	b.add(stacked("Units by state", "Units of running jobs: queued, leased, done. Done rising steadily is progress; queued with no leased means no worker takes work.", "none",
		q(`arbiter_units`, "{{state}}")), 12, 8)
	b.add(timeseries("Units accepted per second", "Results accepted into totals per second, and duplicates and mismatches beside them.", "ops",
		q(`sum by (outcome) (rate(arbiter_results_total{outcome=~"accepted|duplicate|mismatch"}`+rate+`))`, "{{outcome}}")), 12, 8)

	b.row("Worker throughput")
	b.add(timeseries("Nodes per second by worker", "What each worker computes: perft nodes per second over its last finished unit per thread (0 when idle).", "short",
		q(`sum by (instance, worker) (arbiter_worker_nodes_per_second)`, "{{instance}} {{worker}}")), 12, 8)
	b.add(timeseries("Verification and rejections", "Verification mismatches per second, and results refused as implausible or malformed: the signs of a wrong move generator or a broken worker.", "ops",
		q(`rate(arbiter_verification_mismatches_total`+rate+`)`, "mismatch"),
		q(`sum by (reason) (rate(arbiter_results_rejected_total{reason=~"implausible|malformed"}`+rate+`))`, "rejected {{reason}}")), 12, 8)
	return b.build()
}

// SPRT is the SPRT tests dashboard.
func SPRT() *Dashboard {
	b := newDashboard("arbiter-sprt", "Arbiter / SPRT tests",
		"Running SPRT tests: the LLR walking towards its bounds, the Elo estimate, pentanomial counts and game throughput; games by result and termination.")
	b.variable("test", "Test", "arbiter_sprt_llr")
	sel := `{test=~"$test"}`
	b.row("Tests")
	b.add(timeseries("LLR and bounds", "The log-likelihood ratio of each test over time with its bounds: the test accepts H1 (the change gains) when the LLR reaches the upper bound and H0 when it reaches the lower one.", "none",
		q(`arbiter_sprt_llr`+sel, "{{test}} LLR"),
		q(`arbiter_sprt_llr_upper_bound`+sel, "{{test}} upper (H1)"),
		q(`arbiter_sprt_llr_lower_bound`+sel, "{{test}} lower (H0)")), 16, 10)
	llr := monitoring.TestLLR
	b.add(table(llr.Title, llr.Description, q(llr.Expr+sel, "")), 8, 10)
	b.add(timeseries("Elo estimate", "Logistic Elo of the new engine from the pentanomial score, as Fishtest shows it beside the pentanomial.", "none",
		q(`arbiter_sprt_elo`+sel, "{{test}}")), 12, 8)
	b.add(timeseries("Games per minute by test", "How fast each test collects games (its game count's slope).", "short",
		q(`deriv(arbiter_sprt_games`+sel+`[5m]) * 60`, "{{test}}")), 12, 8)
	b.add(bars("Pentanomial counts", "Game pairs by the new engine's pair score: 0 (LL), 0.5 (LD), 1 (LW or DD), 1.5 (WD), 2 (WW).", "none",
		q(`sum by (test, score) (arbiter_sprt_pairs`+sel+`)`, "{{test}} {{score}}")), 12, 8)
	b.add(stat("Games counted", "Games each running test has counted (2 × pairs).", "none",
		q(`arbiter_sprt_games`+sel, "{{test}}"), "blue"), 12, 8)

	b.row("Games (all tests and matches)")
	b.add(timeseries("Games per minute by result", "Games reported per minute, by who won (white, black, draw; none = unfinished).", "short",
		q(`sum by (result) (rate(arbiter_games_total`+rate+`)) * 60`, "{{result}}")), 12, 8)
	b.add(timeseries("Games per minute by termination", "How games end: mates, draws by rule, adjudication, and incidents (time forfeits, crashes, illegal moves, stalls).", "short",
		q(`sum by (termination) (rate(arbiter_games_total`+rate+`)) * 60`, "{{termination}}")), 12, 8)
	b.add(timeseries("Time-loss share", "Share of games lost on time. A rising share means an overloaded worker or too short a time control (alert ArbiterTimeLossRateRising).", "percentunit",
		q(`sum(rate(arbiter_games_total{termination="time_forfeit"}[15m])) / clamp_min(sum(rate(arbiter_games_total[15m])), 1e-9)`, "time forfeits")), 24, 7)
	return b.build()
}

// Workers is the workers dashboard.
func Workers() *Dashboard {
	b := newDashboard("arbiter-workers", "Arbiter / Workers",
		"The workers: how many, are they scraped, how fast they compute, how fast the coordinator answers them, and what goes wrong.")
	b.row("Health")
	b.add(stat("Workers connected", "Workers holding a live session with the coordinator.", "none",
		q(`arbiter_workers_connected`, ""), "red", 1, "green"), 6, 5)
	b.add(timeseries("Scrape targets up", "1 per Arbiter target Prometheus scraped at its last attempt; a worker at 0 is down or unreachable.", "none",
		q(`up{job=~"arbiter-.*"}`, "{{job}} {{instance}}")), 18, 5)
	b.add(timeseries("Lease expiries", "Leases that expired without a result, per second: workers that died or stalled. A storm relative to grants fires ArbiterLeaseExpiryStorm.", "ops",
		q(`rate(arbiter_lease_expiries_total`+rate+`)`, "expired"),
		q(`rate(arbiter_leases_granted_total`+rate+`)`, "granted")), 12, 8)
	b.add(timeseries("Workers connected over time", "Connected workers over time: scaling, restarts and losses show here.", "none",
		q(`arbiter_workers_connected`, "connected")), 12, 8)

	b.row("Throughput")
	b.add(stacked("Perft nodes per second by worker", "Each worker's perft speed over its last finished units (stacked: the cluster's speed).", "short",
		q(`sum by (instance, worker) (arbiter_worker_nodes_per_second)`, "{{instance}} {{worker}}")), 12, 8)
	b.add(timeseries("Games per minute by worker", "Games each worker played to an end, per minute.", "short",
		q(`sum by (instance, worker) (rate(arbiter_worker_games_total`+rate+`)) * 60`, "{{instance}} {{worker}}")), 12, 8)
	b.add(timeseries("Lease round-trip time", "Round trip of lease calls to the coordinator (long-poll wait excluded): p50 and p99 over all workers. A slow coordinator or network shows here first.", "s",
		q(`histogram_quantile(0.5, sum by (le) (rate(arbiter_worker_lease_rtt_seconds_bucket`+rate+`)))`, "p50"),
		q(`histogram_quantile(0.99, sum by (le) (rate(arbiter_worker_lease_rtt_seconds_bucket`+rate+`)))`, "p99")), 12, 8)
	b.add(timeseries("Lease calls per second by worker", "Lease answers each worker received per second.", "ops",
		q(`sum by (instance, worker) (rate(arbiter_worker_lease_rtt_seconds_count`+rate+`))`, "{{instance}} {{worker}}")), 12, 8)

	b.row("Incidents")
	b.add(timeseries("Engine restarts", "Engine processes restarted after a crash, a hang or a failed start, per worker, over the last hour.", "none",
		q(`sum by (instance, worker) (increase(arbiter_worker_engine_restarts_total[1h]))`, "{{instance}} {{worker}}")), 12, 8)
	b.add(timeseries("Game incidents per minute", "Games that ended by a time forfeit, an engine crash, an illegal move or a stalled engine, per minute.", "short",
		q(`sum by (termination) (rate(arbiter_games_total{`+incidents+`}`+rate+`)) * 60`, "{{termination}}")), 12, 8)

	b.row("Uploaded engines")
	b.add(stat("Artifact bytes stored", "Bytes of the uploaded engines (binaries, source trees) the coordinator keeps, each content once.", "bytes",
		q(`arbiter_artifact_bytes_stored`, ""), "blue"), 6, 8)
	b.add(timeseries("Artifact downloads and builds", "Over the last hour: downloads the coordinator served to workers (new or resumed) and the source builds workers reported (ok, found in their cache, failed). A worker downloads and builds an engine once; a second test of it adds no download or build.", "none",
		q(`sum by (kind) (increase(arbiter_artifact_downloads_total[1h]))`, "download {{kind}}"),
		q(`sum by (outcome) (increase(arbiter_artifact_builds_total[1h]))`, "build {{outcome}}")), 9, 8)
	b.add(timeseries("Bench checks", "Over the last hour: bench signature checks the workers reported before the first game of a test. A mismatch means a worker refused the test (status shows why).", "none",
		q(`sum by (outcome) (increase(arbiter_artifact_bench_checks_total[1h]))`, "{{outcome}}")), 9, 8)
	return b.build()
}

// keyStat is the stat panel of a key figure.
func keyStat(p monitoring.Panel, base string, steps ...any) *Panel {
	return stat(p.Title, p.Description, p.Unit, q(p.Expr, p.Legend), base, steps...)
}

// kindRows adds the row of every registered kind that has one, in the
// kinds' order.
func kindRows(b *builder) {
	for _, k := range workload.Kinds() {
		if k.Dashboard == nil {
			continue
		}
		b.row(k.Dashboard.Title)
		for _, p := range k.Dashboard.Panels {
			var targets []Target
			for _, dq := range p.Queries {
				targets = append(targets, q(dq.Expr, dq.Legend))
			}
			if p.Stat && len(targets) == 1 {
				b.add(stat(p.Title, p.Description, p.Unit, targets[0], "blue"), p.Width, p.Height)
			} else {
				b.add(timeseries(p.Title, p.Description, p.Unit, targets...), p.Width, p.Height)
			}
		}
	}
}
