package localcluster

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/base/certs"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/forward"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/pgtest"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// Three coordinators on one PostgreSQL: one leads and serves gRPC and
// pages, the others follow, say so on /readyz and relay gRPC and pages to
// the leader; when the leader stops, a follower takes over, loads the
// store, and a client given the three addresses finds it.
func TestSeveralCoordinators(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	data := t.TempDir()
	var srvs []*Server
	var addrs []string
	for range 3 {
		addr := proctest.FreeAddr(t)
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
	if srvs[1].Addr() != addrs[1] || srvs[1].Coordinator() != nil {
		t.Fatalf("a follower runs a coordinator, or does not forward on its port (%q)", srvs[1].Addr())
	}
	code, body := get(t, "http://"+srvs[0].HTTPAddr()+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "ready: leader, term 1; database reachable") {
		t.Fatalf("leader's /readyz: %d %q", code, body)
	}
	code, body = get(t, "http://"+srvs[1].HTTPAddr()+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "ready: follower, term 1, leader ") ||
		!strings.Contains(body, "(grpc "+addrs[0]+", http "+srvs[0].HTTPAddr()+")") || !strings.Contains(body, "database reachable; forwarding to the leader") {
		t.Fatalf("follower's /readyz: %d %q", code, body)
	}
	t.Logf("leader's /readyz: %s", strings.TrimSpace(get2(t, srvs[0].HTTPAddr()+"/readyz")))
	t.Logf("follower's /readyz: %d %s", code, strings.TrimSpace(body))
	if code, body = get(t, "http://"+srvs[1].HTTPAddr()+"/"); code != http.StatusOK || body != "pages" {
		t.Fatalf("follower's page (the leader's, relayed): %d %q", code, body)
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

	// A client given only a follower's address is served, by the leader.
	viaFollower, err := clusterclient.Connect(clusterclient.Options{Address: addrs[2], Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer viaFollower.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	job, err := viaFollower.Jobs.SubmitPerft(ctx, &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 3}})
	if err != nil {
		t.Fatalf("submitted through a follower: %v", err)
	}
	if j, err := srvs[0].Coordinator().Core.Job(job.GetJob().GetJobId(), false); err != nil || j == nil {
		t.Fatalf("the job submitted through a follower is not the leader's: %v", err)
	}
	cl, err := clusterclient.Connect(clusterclient.Options{Address: strings.Join(addrs, ","), Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

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
	// The remaining follower relays to the new leader.
	viaOther, err := clusterclient.Connect(clusterclient.Options{Address: addrs[other], Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer viaOther.Close()
	if err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) error {
		got, err = viaOther.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: job.GetJob().GetJobId()})
		return err
	}); err != nil || got.GetJob().GetJobId() != job.GetJob().GetJobId() {
		t.Fatalf("the job through the follower of the new leader: %v", err)
	}
	_, body = get(t, "http://"+srvs[other].HTTPAddr()+"/metrics")
	if !strings.Contains(body, `arbiter_coordinator_forwarded_calls_total{code="OK",protocol="grpc"}`) {
		t.Fatalf("follower's /metrics lacks its forwarded calls")
	}
}

// A follower passes the caller's address (and verified client
// certificate) on to the leader signed; the leader believes that origin
// only with a valid signature, so a caller that forges the header gets
// nothing from it: not another address, not a worker's identity.
func TestForwardedOrigin(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	data := t.TempDir()
	whoami := func(*coordinator.Coordinator, *store.Store) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.RemoteAddr)) }), nil
	}
	var srvs []*Server
	for range 2 {
		srv, err := Serve(ServerConfig{Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0", Data: data, Store: dsn, Token: "t",
			LeaseDuration: time.Second, UnitDuration: 100 * time.Millisecond, LeaderTimeout: time.Second, Pages: whoami})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		srvs = append(srvs, srv)
	}
	lead, follow := srvs[0], srvs[1]
	if !lead.Leading() || follow.Leading() {
		t.Fatal("want the first to lead")
	}

	// HTTP: the leader's pages see the caller, not the follower.
	var local string
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			local = c.LocalAddr().String()
		}
		return c, err
	}}}
	httpGet := func(url, header string) string {
		req, _ := http.NewRequest("GET", url, nil)
		if header != "" {
			req.Header.Set(forward.Header, header)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	forged := "addr=203.0.113.9%3A4444&cn=w1&mac=" + strings.Repeat("ab", 32)
	if got := httpGet("http://"+follow.HTTPAddr()+"/", forged); got != local {
		t.Fatalf("the leader's page through the follower saw %q, want the caller %q", got, local)
	}
	if got := httpGet("http://"+lead.HTTPAddr()+"/", forged); got != local {
		t.Fatalf("the leader's page with a forged origin saw %q, want the caller %q", got, local)
	}

	// gRPC: a forged origin naming a worker's certificate is no
	// credential, straight to the leader or through the follower.
	listJobs := func(addr, header string) error {
		cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = arbiterv1.NewJobServiceClient(cc).ListJobs(metadata.AppendToOutgoingContext(ctx, forward.Header, header), &arbiterv1.ListJobsRequest{})
		return err
	}
	for _, addr := range []string{lead.Addr(), follow.Addr()} {
		if err := listJobs(addr, forged); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("a forged certificate name via %s: %v, want Unauthenticated", addr, err)
		}
	}
	// The same claim signed with the store's key is believed: the call
	// is the worker's (refused ListJobs for its role, not unauthenticated).
	st, err := store.OpenURL(dsn, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	signer, err := forward.LoadSigner(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	err = listJobs(lead.Addr(), signer.Sign(forward.Origin{Addr: "203.0.113.9:4444", CertCN: "w1"}))
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a validly signed certificate name: %v, want PermissionDenied (a worker asking for jobs)", err)
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

// With TLS a follower relays over TLS (trusting the certificate the
// coordinators share, --tls-cert), and a worker's client certificate,
// verified by the follower, is its identity at the leader (mTLS through
// a follower).
func TestForwardTLS(t *testing.T) {
	dsn := pgtest.Start(t).NewDatabase(t)
	data := t.TempDir()
	pki := certs.PKI{Dir: t.TempDir()}
	issued, err := pki.Init([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	ca, srvCert := issued[0], issued[1]
	w1, err := pki.Worker("w1")
	if err != nil {
		t.Fatal(err)
	}
	var srvs []*Server
	for range 2 {
		srv, err := Serve(ServerConfig{Listen: "127.0.0.1:0", Data: data, Store: dsn, Token: "t",
			TLSCert: srvCert.CertPath, TLSKey: srvCert.KeyPath, TLSClientCA: ca.CertPath,
			LeaseDuration: time.Second, UnitDuration: 100 * time.Millisecond, LeaderTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		srvs = append(srvs, srv)
	}
	follow := srvs[1]
	if !srvs[0].Leading() || follow.Leading() {
		t.Fatal("want the first to lead")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := clusterclient.Connect(clusterclient.Options{Address: follow.Addr(), Token: "t", CAFile: ca.CertPath})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{}); err != nil {
		t.Fatalf("an admin's call through a TLS follower: %v", err)
	}
	worker, err := clusterclient.Connect(clusterclient.Options{Address: follow.Addr(), CAFile: ca.CertPath, CertFile: w1.CertPath, KeyFile: w1.KeyPath})
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close()
	// A worker's certificate and no token: the leader knows it as
	// cert:w1, a worker, which may not list jobs.
	if _, err := worker.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a worker's certificate through a TLS follower: %v, want PermissionDenied (known, as a worker)", err)
	}
}
