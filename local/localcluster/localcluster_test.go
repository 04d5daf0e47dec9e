package localcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A served coordinator answers health and metrics on HTTP, and hands
// every other path to the pages handler when one is given.
func TestServeHTTPWithPages(t *testing.T) {
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "page %s", r.URL.Path)
	})
	var announced string
	srv, err := Serve(ServerConfig{Listen: "127.0.0.1:0", Data: t.TempDir(), Token: "t", HTTP: "127.0.0.1:0", Pages: func(*coordinator.Coordinator, *store.Store) (http.Handler, error) { return pages, nil },
		LeaseDuration: time.Second, UnitDuration: time.Second, OnListening: func(a string) { announced = a }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if announced == "" || announced != srv.Addr() {
		t.Fatalf("announced %q, serving on %q", announced, srv.Addr())
	}
	base := "http://" + srv.HTTPAddr()
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/": "page /", "/tests/s1": "page /tests/s1"} {
		if code, body := get(t, base+path); code != 200 || strings.TrimSpace(body) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, code, body, want)
		}
	}
	if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "arbiter_leases_granted_total") || !strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics: %d, no coordinator or runtime metrics:\n%.500s", code, body)
	}
	srv.Stop()
	if err := srv.Ready(); err == nil {
		t.Error("ready after Stop")
	}
	srv.Stop() // twice is harmless
}

// Without pages, only the health and metrics paths exist.
func TestServeHTTPWithoutPages(t *testing.T) {
	srv, err := Serve(ServerConfig{Listen: "127.0.0.1:0", Data: t.TempDir(), Token: "t", HTTP: "127.0.0.1:0",
		LeaseDuration: time.Second, UnitDuration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if code, _ := get(t, "http://"+srv.HTTPAddr()+"/tests"); code != http.StatusNotFound {
		t.Errorf("GET /tests without pages: %d, want 404", code)
	}
	if srv.Data() == "" || srv.Coordinator() == nil || srv.Registry() == nil {
		t.Error("accessors empty")
	}
}

// Bad input is refused with exit status 2 and a message naming it; the
// store is not created on a refusal that needs no I/O.
func TestServeRefusesBadInput(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	ok := func() ServerConfig {
		return ServerConfig{Listen: "127.0.0.1:0", Data: t.TempDir(), Token: "t", LeaseDuration: time.Second, UnitDuration: time.Second}
	}
	cases := []struct {
		name string
		edit func(*ServerConfig)
		want string
	}{
		{"no token", func(c *ServerConfig) { c.Token = "" }, "no token"},
		{"verify default", func(c *ServerConfig) { c.VerifyDefault = 1.5 }, "--recheck-default 1.5"},
		{"cert without key", func(c *ServerConfig) { c.TLSCert = "c.pem" }, "--tls-cert and --tls-key go together"},
		{"client CA alone", func(c *ServerConfig) { c.TLSClientCA = "ca.pem" }, "--tls-client-ca needs --tls-cert"},
		{"missing cert", func(c *ServerConfig) { c.TLSCert, c.TLSKey = "/no/cert.pem", "/no/key.pem" }, "/no/cert.pem"},
		{"short lease", func(c *ServerConfig) { c.LeaseDuration = 50 * time.Millisecond }, "--lease-duration 50ms"},
		{"short leader timeout", func(c *ServerConfig) { c.LeaderTimeout = 500 * time.Millisecond }, "--leader-timeout 500ms: must be at least 1s"},
		{"no unit duration", func(c *ServerConfig) { c.UnitDuration = 0 }, "--unit-duration 0s"},
		{"data is a file", func(c *ServerConfig) { c.Data = file }, "--data:"},
		{"store not PostgreSQL", func(c *ServerConfig) { c.Store = "mysql://u:p@h/db" }, "--store: not a PostgreSQL URL"},
		{"store unreachable", func(c *ServerConfig) { c.Store = "postgres://u:p@127.0.0.1:1/db?connect_timeout=2" }, "--store:"},
		{"listen taken", func(c *ServerConfig) { c.Listen = busy.Addr().String() }, "--listen " + busy.Addr().String()},
		{"http taken", func(c *ServerConfig) { c.HTTP = busy.Addr().String() }, "--http " + busy.Addr().String()},
	}
	for _, c := range cases {
		cfg := ok()
		c.edit(&cfg)
		srv, err := Serve(cfg)
		if err == nil {
			srv.Stop()
			t.Errorf("%s: served", c.name)
			continue
		}
		if cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (status %d), want status 2 naming %q", c.name, err, cliexit.Code(err, -1), c.want)
		}
	}
	// A refused listener leaves the store closed: it opens again.
	cfg := ok()
	data := cfg.Data
	cfg.Listen = busy.Addr().String()
	if _, err := Serve(cfg); err == nil {
		t.Fatal("served on a taken port")
	}
	cfg = ok()
	cfg.Data = data
	srv, err := Serve(cfg)
	if err != nil {
		t.Fatalf("the store after a refused listener: %v", err)
	}
	srv.Stop()
}

// Start runs a perft job on two in-process workers over loopback gRPC:
// exact, every unit verified by the other worker (each its own
// identity), their metrics labelled by worker; Stop removes the
// temporary store.
func TestStartRunsVerifiedPerft(t *testing.T) {
	cl, err := Start(Config{Workers: 2, Threads: 1, HashMB: 16, SharedHash: true, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: ServerConfig{UnitDuration: 100 * time.Millisecond, HTTP: "127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	data := cl.Data()
	if !strings.Contains(filepath.Base(data), "arbiter-up-") || cl.Token() == "" || cl.Threads() != 1 {
		t.Fatalf("data %q, token %q, threads %d", data, cl.Token(), cl.Threads())
	}
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 5, VerifyFraction: 1}})
	if err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchJob(ctx, resp.GetJob().GetJobId(), clusterclient.Interactive, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := final.GetProgress()
	if final.GetNodes() != "4865609" || p.GetUnitsVerified() != p.GetUnitsTotal() || p.GetMismatches() != 0 {
		t.Fatalf("perft 5 = %s, %d of %d units verified, %d mismatches", final.GetNodes(), p.GetUnitsVerified(), p.GetUnitsTotal(), p.GetMismatches())
	}
	_, body := get(t, "http://"+cl.HTTPAddr()+"/metrics")
	for _, w := range []string{`worker="up-1"`, `worker="up-2"`} {
		if !strings.Contains(body, w) {
			t.Errorf("/metrics has no series with %s", w)
		}
	}
	cl.Stop()
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("temporary store %s left behind (%v)", data, err)
	}
}

// A given data directory is kept, and a second cluster on it sees the
// first one's job.
func TestStartKeepsGivenData(t *testing.T) {
	data := t.TempDir()
	cfg := Config{HashMB: 1, Server: ServerConfig{Data: data, Token: "tok", UnitDuration: time.Second}}
	cl, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3}})
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	cl.Stop()
	cl, err = Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c, err = cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: resp.GetJob().GetJobId()}); err != nil {
		t.Fatalf("the job after a restart on the same data: %v", err)
	}
}

// Workers added later join the same coordinator and finish what is
// waiting; none can be added after Stop.
func TestAddWorkers(t *testing.T) {
	cl, err := Start(Config{Threads: 1, HashMB: 8, BenchNPS: 1_000_000, Server: ServerConfig{UnitDuration: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := c.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.AddWorkers(1); err != nil {
		t.Fatal(err)
	}
	final, err := c.WatchJob(ctx, resp.GetJob().GetJobId(), clusterclient.Interactive, nil)
	if err != nil || final.GetNodes() != "197281" {
		t.Fatalf("perft 4 = %q (%v), want 197281", final.GetNodes(), err)
	}
	cl.Stop()
	if err := cl.AddWorkers(1); err == nil {
		t.Fatal("a worker added after Stop")
	}
}

func TestStartRefusesBadWorkers(t *testing.T) {
	for _, cfg := range []Config{{Workers: -1, HashMB: 1}, {Workers: MaxWorkers + 1, HashMB: 1}, {Workers: 1, HashMB: 0}} {
		cl, err := Start(cfg)
		if err == nil {
			cl.Stop()
			t.Errorf("%+v: started", cfg)
		} else if cliexit.Code(err, -1) != 2 {
			t.Errorf("%+v: %v, want status 2", cfg, err)
		}
	}
}
