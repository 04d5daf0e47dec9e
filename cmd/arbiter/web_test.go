package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func fetchPage(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestUpServesPages: `arbiter up` prints the pages' URL at start and serves
// them there, with a worker of its own on /workers; health and metrics
// stay on the same port.
func TestUpServesPages(t *testing.T) {
	p := startArbiterProcess(t, nil, "up", "--temp", "--workers", "1", "--token", "T", "--unit-duration", "1s")
	url := strings.TrimSpace(p.waitLine(t, "arbiter up: pages on "))
	url, _, _ = strings.Cut(url, " ")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("pages URL %q", url)
	}
	p.waitLine(t, "arbiter up: serving")
	if code, body := fetchPage(t, url); code != 200 || !strings.Contains(body, "<h1>Work</h1>") || !strings.Contains(body, "Reading anonymously") {
		t.Errorf("GET /: %d\n%s", code, body)
	}
	// The worker registers after its start-up bench.
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := fetchPage(t, url+"workers")
		if code == 200 && strings.Contains(body, "up-1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /workers: %d (want the local worker up-1 listed)\n%s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, path := range []string{"healthz", "readyz", "metrics"} {
		if code, _ := fetchPage(t, url+path); code != 200 {
			t.Errorf("GET /%s: %d", path, code)
		}
	}
}

// TestCoordinatorPagesFlags: --web-anonymous=false asks readers to sign
// in; bad --grafana-url and --web-books are refused before anything
// starts, naming the flag (exit status 2).
func TestCoordinatorPagesFlags(t *testing.T) {
	p := startArbiterProcess(t, nil, "coordinator", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--data", t.TempDir(),
		"--token", "T", "--web-anonymous=false", "--grafana-url", "https://grafana.example")
	url := strings.TrimSpace(p.waitLine(t, "arbiter coordinator: pages on "))
	code, body := fetchPage(t, url)
	if code < 300 || code >= 500 || strings.Contains(body, "<h1>Work</h1>") {
		t.Errorf("GET / without a credential and --web-anonymous=false: %d\n%s", code, body)
	}
	if code, _ := fetchPage(t, url+"healthz"); code != 200 {
		t.Errorf("GET /healthz: %d", code)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"coordinator", "--token", "T", "--grafana-url", "ftp://grafana"}, `--grafana-url "ftp://grafana"`},
		{[]string{"coordinator", "--token", "T", "--grafana-url", "grafana.example"}, `--grafana-url "grafana.example"`},
		{[]string{"up", "--token", "T", "--web-books", t.TempDir() + "/none"}, "--web-books"},
	} {
		_, _, err := runArbiter(t, "", c.args...)
		if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, exitCode(err), err, c.want)
		}
	}
}
