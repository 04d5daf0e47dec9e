package localcluster

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/pgtest"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Three coordinators on one PostgreSQL: one leads and serves gRPC and
// pages, the others follow, say so on /readyz and answer pages with 503;
// when the leader stops, a follower takes over, loads the store, and a
// client given the three addresses finds it.
func TestSeveralCoordinators(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	data := t.TempDir()
	var srvs []*Server
	var addrs []string
	for range 3 {
		addr := freeAddr(t)
		addrs = append(addrs, addr)
		srv, err := Serve(ServerConfig{Listen: addr, HTTP: "127.0.0.1:0", Data: data, Store: dsn, Token: "t",
			LeaseDuration: time.Second, UnitDuration: 100 * time.Millisecond, LeaderTimeout: time.Second,
			Pages: pagesSaying("pages")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		srvs = append(srvs, srv)
	}
	// The first one started finds the lock free at its first check and
	// leads before Serve returns; the others follow.
	if !srvs[0].Leading() || srvs[1].Leading() || srvs[2].Leading() {
		t.Fatalf("leading: %v %v %v; want the first only", srvs[0].Leading(), srvs[1].Leading(), srvs[2].Leading())
	}
	if srvs[1].Addr() != "" || srvs[1].Coordinator() != nil {
		t.Fatal("a follower serves gRPC")
	}
	code, body := get(t, "http://"+srvs[0].HTTPAddr()+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "ready: leader, term 1; database reachable") {
		t.Fatalf("leader's /readyz: %d %q", code, body)
	}
	code, body = get(t, "http://"+srvs[1].HTTPAddr()+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "follower, term 1, leader ") ||
		!strings.Contains(body, "(grpc "+addrs[0]+", http "+srvs[0].HTTPAddr()+")") || !strings.Contains(body, "database reachable") {
		t.Fatalf("follower's /readyz: %d %q", code, body)
	}
	t.Logf("leader's /readyz: %s", strings.TrimSpace(get2(t, srvs[0].HTTPAddr()+"/readyz")))
	t.Logf("follower's /readyz: %d %s", code, strings.TrimSpace(body))
	if code, body = get(t, "http://"+srvs[1].HTTPAddr()+"/"); code != http.StatusServiceUnavailable || !strings.Contains(body, "follows") {
		t.Fatalf("follower's page: %d %q", code, body)
	}
	t.Logf("follower's page: %d %s", code, strings.TrimSpace(body))
	if code, body = get(t, "http://"+srvs[0].HTTPAddr()+"/"); code != http.StatusOK || body != "pages" {
		t.Fatalf("leader's page: %d %q", code, body)
	}
	_, body = get(t, "http://"+srvs[1].HTTPAddr()+"/metrics")
	for _, want := range []string{"arbiter_coordinator_leader 0", "arbiter_coordinator_database_up 1", "arbiter_coordinator_database_latency_seconds_count"} {
		if !strings.Contains(body, want) {
			t.Fatalf("follower's /metrics lacks %q", want)
		}
	}

	cl, err := clusterclient.Connect(clusterclient.Options{Address: strings.Join(addrs, ","), Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	job, err := cl.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3}})
	if err != nil {
		t.Fatal(err)
	}

	srvs[0].Stop()
	deadline := time.Now().Add(10 * time.Second)
	next := -1
	for next < 0 {
		for i := 1; i < 3; i++ {
			if srvs[i].Leading() {
				next = i
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no follower took over")
		}
		time.Sleep(20 * time.Millisecond)
	}
	other := 3 - next
	if srvs[other].Leading() {
		t.Fatal("two leaders")
	}
	var got *arbiterv1.GetJobResponse
	if err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) error {
		got, err = cl.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: job.GetJob().GetJobId()})
		return err
	}); err != nil {
		t.Fatalf("the job from the new leader: %v", err)
	}
	if got.GetJob().GetJobId() != job.GetJob().GetJobId() {
		t.Fatalf("job %q", got.GetJob().GetJobId())
	}
	code, body = get(t, "http://"+srvs[next].HTTPAddr()+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "ready: leader, term 2") {
		t.Fatalf("new leader's /readyz: %d %q", code, body)
	}
	// The follower names the new leader once it has read the row.
	deadline = time.Now().Add(5 * time.Second)
	for {
		_, body = get(t, "http://"+srvs[other].HTTPAddr()+"/readyz")
		if strings.Contains(body, "term 2") && strings.Contains(body, "grpc "+addrs[next]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("follower's /readyz after the takeover: %q", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, body = get(t, "http://"+srvs[next].HTTPAddr()+"/metrics")
	for _, want := range []string{"arbiter_coordinator_leader 1", "arbiter_coordinator_leadership_changes_total 1", "arbiter_coordinator_leader_term 2"} {
		if !strings.Contains(body, want) {
			t.Fatalf("new leader's /metrics lacks %q", want)
		}
	}
}

func pagesSaying(s string) func(*coordinator.Coordinator, *store.Store) (http.Handler, error) {
	return func(*coordinator.Coordinator, *store.Store) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(s)) }), nil
	}
}

func get2(t *testing.T, url string) string {
	t.Helper()
	_, body := get(t, "http://"+url)
	return body
}
