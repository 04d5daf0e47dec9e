package monitoring

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigPromtool: the configuration Config writes, with the embedded
// rules beside it, passes `promtool check config` (which checks the rule
// files it loads too); a configuration naming a rule file that is not
// there is the control.
func TestConfigPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian package prometheus)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "alerts.yml"), Alerts, 0o644); err != nil {
		t.Fatal(err)
	}
	check := func(rules string) error {
		cfg := filepath.Join(dir, "prometheus.yml")
		if err := os.WriteFile(cfg, []byte(Config("127.0.0.1:7701", rules, 2*time.Second)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(promtool, "check", "config", cfg).CombinedOutput()
		t.Logf("%s", out)
		return err
	}
	if err := check("alerts.yml"); err != nil {
		t.Errorf("promtool check config: %v", err)
	}
	if err := check("missing.yml"); err == nil {
		t.Errorf("promtool accepted a configuration whose rule file is missing")
	}
	if !strings.Contains(string(Alerts), "alert: ArbiterCoordinatorDown") || !strings.Contains(Config("h:1", "a.yml", 0), "job_name: "+Job) {
		t.Errorf("the rules or the coordinator's job are missing")
	}
}

// TestQueryExpandsRateInterval: $__rate_interval is four scrapes.
func TestQueryExpandsRateInterval(t *testing.T) {
	if got := PerftNodes.Query(time.Second); got != "rate(arbiter_perft_nodes_total[4s])" {
		t.Errorf("Query(1s) = %s", got)
	}
	if got := PerftNodes.Query(0); got != "rate(arbiter_perft_nodes_total[60s])" {
		t.Errorf("Query(0) = %s", got)
	}
}

// TestClientLimits: a reply of more series or points than the limits is
// cut to them, one over MaxReply bytes is refused, and an error reply is
// an error naming Prometheus's message.
func TestClientLimits(t *testing.T) {
	var reply func(w http.ResponseWriter)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reply(w) }))
	defer srv.Close()
	c := &Client{URL: srv.URL + "/"}
	query := func() ([]Series, error) {
		end := time.Now()
		return c.QueryRange(context.Background(), "up", end.Add(-time.Hour), end, time.Minute)
	}
	reply = func(w http.ResponseWriter) {
		var series []string
		for i := range 3 * MaxSeries {
			var pts []string
			for j := range 2 * MaxPoints {
				pts = append(pts, fmt.Sprintf(`[%d,"%d"]`, 1000+j, j))
			}
			series = append(series, fmt.Sprintf(`{"metric":{"i":"%03d"},"values":[%s]}`, i, strings.Join(pts, ",")))
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, strings.Join(series, ","))
	}
	s, err := query()
	if err != nil || len(s) != MaxSeries || len(s[0].Values) != MaxPoints+1 || s[0].Labels["i"] != "000" {
		t.Errorf("%d series (%v), want %d of %d points", len(s), err, MaxSeries, MaxPoints+1)
	}
	reply = func(w http.ResponseWriter) { w.Write([]byte(strings.Repeat(" ", MaxReply+1))) }
	if _, err := query(); err == nil || !strings.Contains(err.Error(), "reply over") {
		t.Errorf("an oversized reply: %v", err)
	}
	reply = func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"status":"error","error":"parse error at char 3"}`))
	}
	if _, err := query(); err == nil || !strings.Contains(err.Error(), "parse error at char 3") {
		t.Errorf("an error reply: %v", err)
	}
	if _, err := c.QueryRange(context.Background(), "up", time.Unix(0, 0), time.Now(), time.Second); err == nil {
		t.Errorf("a range of more than %d points was asked for", MaxPoints)
	}
}
