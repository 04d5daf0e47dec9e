package dashgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// TestPanelsAgainstPrometheus is the real check of every panel: it starts
// `arbiter up` (coordinator + 2 local workers, --http) and one standalone
// `arbiter worker --http`, puts a perft job and an SPRT test in flight,
// has the real Prometheus scrape both HTTP ports every second, and runs
// every target query of every committed dashboard (dashboards/*.json)
// through /api/v1/query. A query that returns no series fails.
//
// It skips only when the prometheus binary is absent.
func TestPanelsAgainstPrometheus(t *testing.T) {
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus is not installed (Debian package prometheus; .ci/run installs it): the panel queries are not checked")
	}
	if testing.Short() {
		t.Skip("-short: the panel check runs a cluster and Prometheus for about 30 s")
	}
	bin := arbiterBinary(t)
	dir := t.TempDir()
	grpcAddr, httpAddr, workerAddr, promAddr := proctest.FreeAddr(t), proctest.FreeAddr(t), proctest.FreeAddr(t), proctest.FreeAddr(t)
	const token = "panel-test-token"

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// The cluster: arbiter up with two workers, and a separate worker
	// process (scraped as job arbiter-worker, as in the manifests).
	start(t, dir, "up", bin, "up", "--workers", "2", "--threads", "1", "--hash", "16", "--listen", grpcAddr,
		"--http", httpAddr, "--token", token, "--data", filepath.Join(dir, "data"), "--unit-duration", "1s",
		"--log-level", "warn")
	waitHTTP(t, ctx, "http://"+httpAddr+"/readyz")
	start(t, dir, "worker", bin, "worker", "--coordinator", grpcAddr, "--token", token, "--http", workerAddr,
		"--threads", "1", "--hash", "16", "--name", "panel-worker", "--log-level", "warn")

	conn, err := clusterclient.Dial(grpcAddr, clusterclient.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := arbiterv1.NewJobServiceClient(conn)
	// SPRT in flight: the embedded engine against itself at a fixed node
	// count, with bounds it will not reach during the test.
	sprtMissing := ""
	sj, err := jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{
		EngineA:     &arbiterv1.EngineSpec{Name: "new", Command: "embedded"},
		EngineB:     &arbiterv1.EngineSpec{Name: "base", Command: "embedded"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 2000}},
		Openings: []*arbiterv1.Opening{
			{Index: 0, MovesUci: []string{"e2e4", "e7e5"}}, {Index: 1, MovesUci: []string{"d2d4", "d7d5"}},
			{Index: 2, MovesUci: []string{"c2c4", "e7e5"}}, {Index: 3, MovesUci: []string{"g1f3", "g8f6"}},
		},
		Sprt:       &arbiterv1.SprtParams{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05, Model: "normalized"},
		BatchPairs: 1, HangTimeout: durationpb.New(10 * time.Second), Event: "panel test",
	}})
	switch {
	case status.Code(err) == codes.Unimplemented:
		sprtMissing = "the coordinator has no JobService.SubmitMatch (distributed SPRT)"
	case err != nil:
		t.Fatalf("submit SPRT: %v", err)
	default:
		// The coordinator leases perft units before game pairs, so let
		// the test play its first batches before the perft job arrives.
		id := sj.GetJob().GetJobId()
		played := false
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !played; time.Sleep(250 * time.Millisecond) {
			played = regexp.MustCompile(`(?m)^arbiter_sprt_games\{test="` + id + `"\} [1-9]`).Match(get(t, "http://"+httpAddr+"/metrics"))
		}
		t.Logf("SPRT test %s, games counted before the perft job: %v", id, played)
	}

	// A dataset in flight: the embedded engine's self-play at few nodes.
	dspec, err := anypb.New(&arbiterv1.DatagenSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"},
		Positions: 1_000_000, Nodes: 500, RandomPliesMin: 8, RandomPliesMax: 9, Seed: 1, BatchGames: 1})
	if err != nil {
		t.Fatal(err)
	}
	if dj, err := jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: "datagen", Spec: dspec}); err != nil {
		t.Fatalf("submit datagen: %v", err)
	} else {
		t.Logf("dataset %s", dj.GetJob().GetJobId())
	}

	// Perft in flight: perft(9) of the start position takes minutes here.
	pj, err := jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 9, SplitPly: 3, VerifyFraction: 0.2}})
	if err != nil {
		t.Fatalf("submit perft: %v", err)
	}
	t.Logf("perft job %s: %d units", pj.GetJob().GetJobId(), pj.GetJob().GetProgress().GetUnitsTotal())
	// A coordinator on PostgreSQL, for the election's panels (a
	// coordinator on SQLite has no election): it leads alone, checking
	// the database every 200 ms.
	coordTargets := []string{httpAddr}
	pg, noPG := pgtest.StartOrWhy(t)
	if pg != nil {
		haHTTP := proctest.FreeAddr(t)
		start(t, dir, "coordinator-postgres", bin, "coordinator", "--listen", proctest.FreeAddr(t), "--http", haHTTP,
			"--data", filepath.Join(dir, "data-pg"), "--token", token, "--store", pg.NewDatabase(t), "--leader-timeout", "2s",
			"--log-level", "warn")
		waitHTTP(t, ctx, "http://"+haHTTP+"/readyz")
		coordTargets = append(coordTargets, haHTTP)
	}
	// Prometheus scraping the HTTP ports every second. The coordinators'
	// job has a name of the operator's choosing, not the one the
	// manifests use: the overview's panels must not depend on it.
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: my-farm
    static_configs: [{targets: [%s]}]
  - job_name: arbiter-worker
    static_configs: [{targets: [%q]}]
`, `"`+strings.Join(coordTargets, `", "`)+`"`, workerAddr)
	cfgFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, dir, "prometheus", promBin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	api := "http://" + promAddr
	waitHTTP(t, ctx, api+"/-/ready")

	// Both targets up, then enough scrapes for 10s rate windows.
	for {
		res, err := query(ctx, api, `up == 1`)
		if err == nil && len(res) == len(coordTargets)+1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("targets never up (last: %v, %v)", res, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(12 * time.Second)
	// Every target of every panel of every committed dashboard.
	files, err := filepath.Glob(filepath.Join(dashDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s: %v", dashDir, err)
	}
	vars := strings.NewReplacer("$__rate_interval", "10s", "$test", ".*")
	checked := 0
	for _, f := range files {
		var d Dashboard
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range d.Templating.List {
			m := regexp.MustCompile(`^label_values\((\w+), (\w+)\)$`).FindStringSubmatch(v.Query.Query)
			t.Run(fmt.Sprintf("%s/variable %s", filepath.Base(f), v.Name), func(t *testing.T) {
				if m == nil {
					t.Fatalf("variable query %q: want label_values(metric, label)", v.Query.Query)
				}
				if sprtMissing != "" && strings.HasPrefix(m[1], "arbiter_sprt_") {
					t.Skipf("SPRT series not checked: %s", sprtMissing)
				}
				res, err := query(ctx, api, fmt.Sprintf(`count by (%s) (%s)`, m[2], m[1]))
				if err != nil || len(res) == 0 {
					t.Errorf("variable %s (%s): no values (%v)", v.Name, v.Query.Query, err)
				}
			})
		}
		for _, p := range allPanels(d.Panels) {
			for _, tg := range p.Targets {
				expr := vars.Replace(tg.Expr)
				checked++
				t.Run(fmt.Sprintf("%s/%s/%s", filepath.Base(f), p.Title, tg.RefID), func(t *testing.T) {
					if strings.Contains(expr, "$") {
						t.Fatalf("unsubstituted variable in %q", expr)
					}
					if sprtMissing != "" && strings.Contains(expr, "arbiter_sprt_") {
						t.Skipf("SPRT panel not checked: %s", sprtMissing)
					}
					res, err := query(ctx, api, expr)
					if err != nil {
						t.Fatalf("%s: %v", expr, err)
					}
					if len(res) == 0 {
						t.Errorf("panel %q query %q returns no series", p.Title, expr)
					}
				})
			}
		}
	}
	t.Logf("%d panel queries checked against Prometheus", checked)
	if noPG != "" {
		t.Logf("no coordinator on PostgreSQL (%s): the election panels were checked on the SQLite one alone", noPG)
	}
	checkSoleCoordinatorSeries(t, ctx, api, httpAddr)

	// promtool's lint of both expositions as served.
	if promtool, err := exec.LookPath("promtool"); err == nil {
		for _, addr := range []string{httpAddr, workerAddr} {
			body := get(t, "http://"+addr+"/metrics")
			cmd := exec.Command(promtool, "check", "metrics")
			cmd.Stdin = bytes.NewReader(body)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("promtool check metrics on %s: %v\n%s", addr, err, out)
			}
		}
	}
	// Health endpoints of both processes.
	for _, u := range []string{"http://" + httpAddr + "/healthz", "http://" + workerAddr + "/healthz", "http://" + workerAddr + "/readyz"} {
		get(t, u)
	}
}

// checkSoleCoordinatorSeries wants the election and forwarding series of
// the coordinator on SQLite at instance (the default setup) with the values
// of a coordinator that leads alone: they are what the overview's
// "Coordinators" row draws, and were once absent there.
func checkSoleCoordinatorSeries(t *testing.T, ctx context.Context, api, instance string) {
	sel := fmt.Sprintf(`{instance=%q}`, instance)
	for _, want := range []string{
		`arbiter_coordinator_leader` + sel + ` == 1`,
		`arbiter_coordinator_leader_term` + sel + ` == 1`,
		`arbiter_coordinator_leadership_changes_total` + sel + ` == 1`,
		`arbiter_coordinator_database_up` + sel + ` == 1`,
		`arbiter_coordinator_database_latency_seconds_count` + sel + ` > 5`,
		`sum(arbiter_coordinator_forwarded_calls_total` + sel + `) == 0`,
		`arbiter_coordinator_forwarded_in_flight` + sel + ` == 0`,
		`count(arbiter_coordinator_leader) >= 1`,
	} {
		res, err := query(ctx, api, want)
		if err != nil || len(res) == 0 {
			t.Errorf("the SQLite coordinator: %s holds for no series (%v)", want, err)
		}
	}
}

func allPanels(ps []*Panel) []*Panel {
	var out []*Panel
	for _, p := range ps {
		if p.Type != "row" {
			out = append(out, p)
		}
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// query runs an instant query and returns its result vector.
func query(ctx context.Context, api, expr string) ([]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api+"/api/v1/query?query="+url.QueryEscape(expr), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string            `json:"resultType"`
			Result     []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", expr, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: result type %s", expr, r.Data.ResultType)
	}
	return r.Data.Result, nil
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b
}

func waitHTTP(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never answered 200 (last: %v)", u, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// start runs a process for the test's duration (stopped with SIGTERM,
// killed after 10 s) and shows its output when the test fails.
func start(t *testing.T, dir, name, bin string, args ...string) {
	t.Helper()
	logFile := filepath.Join(dir, name+".log")
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			t.Logf("%s output (tail):\n%s", name, b)
		}
	})
}

// arbiterBinary builds ./cmd/arbiter (ARBITER_BIN overrides it).
func arbiterBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("ARBITER_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin := filepath.Join(t.TempDir(), "arbiter")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/arbiter")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/arbiter: %v\n%s", err, out)
	}
	return bin
}
