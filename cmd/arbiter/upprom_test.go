package main

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator/monitoring"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// TestUpPrometheusMonitor runs `arbiter up --prometheus --workers 2` as a
// real process with an SPRT test and a perft job in flight, waits until
// its Prometheus has scraped them, requires a series for every key
// panel's query from its API (the alert rules loaded too), and then the
// figures on /monitor: numbers, the coordinator up, two workers, two
// running jobs and the test's LLR. The control: an up without
// --prometheus serves a /monitor that says how to get one.
func TestUpPrometheusMonitor(t *testing.T) {
	if _, err := exec.LookPath("prometheus"); err != nil {
		t.Skip("prometheus is not installed (Debian package prometheus; .ci/run installs it)")
	}
	if testing.Short() {
		t.Skip("-short: runs a farm and Prometheus for about 30 s")
	}
	const token = "upprom-token"
	dir := t.TempDir()
	up := startArbiterProcess(t, nil, "up", "--prometheus", "--prometheus-scrape", "1s", "--workers", "2", "--threads", "1",
		"--hash", "16", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--token", token, "--unit-duration", "1s")
	addr := up.waitLine(t, "arbiter coordinator: listening on ")
	pages := up.waitLine(t, "arbiter up: pages on ")
	promURL, _, _ := strings.Cut(up.waitLine(t, "arbiter up: prometheus on "), " ")
	if !strings.HasPrefix(promURL, "http://127.0.0.1:") {
		t.Fatalf("prometheus on %q, want a loopback URL", promURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testID := submitUpPromWork(ctx, t, addr, token, pages)

	// Every key panel has series in Prometheus.
	c := &monitoring.Client{URL: promURL}
	for _, k := range monitoring.Key() {
		for {
			end := time.Now()
			s, err := c.QueryRange(ctx, k.Query(time.Second), end.Add(-time.Minute), end, time.Second)
			// A figure of the work in flight: not 0 (the LLR may be).
			if err == nil && len(s) > 0 && (k.PerSeries || s[len(s)-1].Last() != 0) {
				t.Logf("%s: %s = %v", k.Title, k.Query(time.Second), s[len(s)-1].Last())
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: no series of %s (%v)\n%s", k.Title, k.Query(time.Second), err, up.log())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	if rules := string(httpGet(t, promURL+"api/v1/rules")); !strings.Contains(rules, `"name":"ArbiterCoordinatorDown"`) {
		t.Errorf("the alert rules are not loaded: %.300s", rules)
	}

	page := string(httpGet(t, pages+"monitor"))
	// A figure as /monitor writes it: grouped digits, or three significant.
	const number = `-?[0-9][0-9\x{202f} ]*(?:\.[0-9]+)?(?:e[-+][0-9]+)?`
	for title, want := range map[string]string{"Coordinator up": "1", "Workers connected": "2", "Running jobs": "2",
		"Units queued": number, "Perft nodes/s": number, "Games/min": number, "Tests now": number} {
		re := regexp.MustCompile(`<tr data-figure="` + title + `">.*?<td>([^<]*)</td><td class="num" data-field="value">(` + want + `)</td><td><svg class="spark"`)
		m := re.FindStringSubmatch(page)
		if m == nil {
			t.Errorf("/monitor: no figure %s matching %s in:\n%s", title, want, page)
			continue
		}
		if title == "Tests now" && m[1] != testID {
			t.Errorf("/monitor: LLR of %q, want test %s", m[1], testID)
		}
	}
	if strings.Contains(page, "no data") {
		t.Errorf("/monitor says no data:\n%s", page)
	}

	// The control: no Prometheus, and the page says how to get one.
	plain := startArbiterProcess(t, nil, "up", "--temp", "--workers", "1", "--threads", "1", "--hash", "1", "--listen", "127.0.0.1:0", "--token", token)
	page = string(httpGet(t, plain.waitLine(t, "arbiter up: pages on ")+"monitor"))
	for _, want := range []string{`id="no-prometheus"`, "<code>arbiter up --prometheus</code>", "apt-get install prometheus", "--prometheus-url"} {
		if !strings.Contains(page, want) {
			t.Errorf("/monitor without Prometheus: no %q in:\n%s", want, page)
		}
	}
	if strings.Contains(page, `<table id="monitor">`) {
		t.Errorf("/monitor without Prometheus shows figures")
	}
}

// submitUpPromWork puts an SPRT test (the embedded engine against itself,
// bounds it will not reach) and then a perft(9) in flight on up at addr,
// and returns the test's id once its first games are counted.
func submitUpPromWork(ctx context.Context, t *testing.T, addr, token, pages string) string {
	t.Helper()
	conn, err := clusterclient.Dial(addr, clusterclient.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	jobs := arbiterv1.NewJobServiceClient(conn)
	embedded := func(name string) *arbiterv1.EngineSpec { return &arbiterv1.EngineSpec{Name: name, Command: "embedded"} }
	sj, err := jobs.SubmitMatch(ctx, &arbiterv1.SubmitMatchRequest{Spec: &arbiterv1.MatchSpec{
		EngineA: embedded("new"), EngineB: embedded("base"),
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 2000}},
		Openings:    []*arbiterv1.Opening{{Index: 0, MovesUci: []string{"e2e4", "e7e5"}}, {Index: 1, MovesUci: []string{"d2d4", "d7d5"}}},
		Sprt:        &arbiterv1.SprtParams{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05, Model: "normalized"},
		BatchPairs:  1, HangTimeout: durationpb.New(10 * time.Second), Event: "upprom",
	}})
	if err != nil {
		t.Fatalf("submit SPRT: %v", err)
	}
	id := sj.GetJob().GetJobId()
	// Perft units are leased before game pairs: let the test count its
	// first games before the perft job arrives.
	counted := regexp.MustCompile(`(?m)^arbiter_sprt_games\{test="` + id + `"\} [1-9]`)
	for !counted.Match(httpGet(t, pages+"metrics")) {
		if ctx.Err() != nil {
			t.Fatalf("test %s counted no games", id)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if _, err := jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 9, SplitPly: 3}}); err != nil {
		t.Fatalf("submit perft: %v", err)
	}
	return id
}

// httpGet is the body of url, which must answer 200.
func httpGet(t *testing.T, url string) []byte {
	t.Helper()
	code, body := fetchPage(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %.300s", url, code, body)
	}
	return []byte(body)
}

// TestUpPrometheusFlagErrors: a --prometheus that names no program, and
// none on PATH, and bad --prometheus-url and --prometheus-scrape are
// refused before anything starts, naming the flag and
// the package to install.
func TestUpPrometheusFlagErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-prometheus")
	_, _, err := runArbiter(t, "", "up", "--temp", "--prometheus="+missing, "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), `--prometheus="`+missing+`": not an executable Prometheus`) || !strings.Contains(err.Error(), "apt-get install prometheus") {
		t.Errorf("--prometheus=%s: %v", missing, err)
	}
	t.Setenv("PATH", t.TempDir())
	_, _, err = runArbiter(t, "", "up", "--temp", "--prometheus", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "--prometheus: no prometheus on PATH (apt-get install prometheus") {
		t.Errorf("--prometheus without one on PATH: %v", err)
	}
	_, _, err = runArbiter(t, "", "up", "--temp", "--prometheus-url", "ftp://x", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), `--prometheus-url "ftp://x": want an http:// or https:// URL`) {
		t.Errorf("--prometheus-url ftp://x: %v", err)
	}
	_, _, err = runArbiter(t, "", "up", "--temp", "--prometheus-scrape", "0s", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "--prometheus-scrape 0s: want from 1s to 1h") {
		t.Errorf("--prometheus-scrape 0s: %v", err)
	}
}
