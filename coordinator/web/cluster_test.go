package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/artifacts"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
	"github.com/arbiter-chess/arbiter/worker"
)

// cluster is a real coordinator in this process: its store in a temporary
// directory, its gRPC face on a loopback port, the pages on another, and
// workers (package worker, each with its own worker credential) talking
// gRPC to it exactly as remote ones do.
type cluster struct {
	t      *testing.T
	c      *coordinator.Coordinator
	st     *store.Store
	grpc   string // gRPC address
	web    *httptest.Server
	srv    *Server
	admin  string // the bootstrap admin token
	client string // a client credential ("carol")
	conns  []*clusterclient.Client
	stop   []func()
	// closeAll stops everything, once.
	closeAll func()
}

const adminToken = "web-test-admin-token"

type clusterOpts struct {
	requireSignIn bool
	grafana       string
	books         string
	dir           string
	accounts      coordinator.AccountsConfig
	// reopen: the store in dir was a cluster's already (its credentials
	// exist).
	reopen bool
	// noWorkerMinting is the coordinator's --worker-token-minting=false.
	noWorkerMinting bool
}

func newCluster(t testing.TB, o clusterOpts) *cluster {
	t.Helper()
	tt, _ := t.(*testing.T)
	cl := &cluster{t: tt, admin: adminToken}
	dir := o.dir
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cl.st = st
	ctx := context.Background()
	c, err := coordinator.New(ctx, coordinator.Config{Store: st, Token: adminToken, LeaseDuration: 3 * time.Second,
		TargetUnitDuration: 50 * time.Millisecond, Accounts: o.accounts, Git: artifacts.GitConfig{Allow: []string{"127.0.0.1"}}, Games: gamepair.Settings{BatchDuration: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	cl.c = c
	gs, _, err := c.NewGRPCServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(lis)
	cl.grpc = lis.Addr().String()
	srv, err := New(ctx, Config{Core: c.Core, Games: c.Games(), Credentials: c.Credentials,
		Accounts: c.Accounts, Store: st, GrafanaURL: o.grafana, RequireSignIn: o.requireSignIn, BooksDir: o.books, LiveInterval: 500 * time.Millisecond, Diffs: c.Artifacts, Hooks: c.Hooks,
		Follows: c.Hooks, EventPoll: 300 * time.Millisecond, Trust: c.Trust, NoWorkerMinting: o.noWorkerMinting})
	if err != nil {
		t.Fatal(err)
	}
	cl.srv = srv
	cl.web = httptest.NewServer(srv)
	if !o.reopen {
		if cl.client, err = c.Credentials.Create(ctx, identity.Bootstrap, "carol", identity.Client); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	cl.closeAll = func() {
		once.Do(func() {
			for i := len(cl.stop) - 1; i >= 0; i-- {
				cl.stop[i]()
			}
			srv.Close()
			cl.web.CloseClientConnections()
			cl.web.Close()
			gs.Stop()
			c.Close()
			for _, cc := range cl.conns {
				cc.Close()
			}
			st.Close()
		})
	}
	t.Cleanup(cl.closeAll)
	return cl
}

// stopNow stops the cluster before the test ends (a restart on its store).
func (cl *cluster) stopNow() { cl.closeAll() }

// dial connects a gRPC client with token.
func (cl *cluster) dial(t testing.TB, token string) *clusterclient.Client {
	t.Helper()
	c, err := clusterclient.Connect(clusterclient.Options{Address: cl.grpc, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	cl.conns = append(cl.conns, c)
	return c
}

// startWorker runs a worker of its own identity until the test ends.
func (cl *cluster) startWorker(t testing.TB, name string, verifyEngines ...verifyproto.LocalEngine) {
	t.Helper()
	cl.startWorkerWith(t, name, func(c *worker.Config) { c.VerifyEngines = verifyEngines })
}

// startWorkerWith runs a worker of its own identity until the test ends,
// its configuration changed by adjust.
func (cl *cluster) startWorkerWith(t testing.TB, name string, adjust func(*worker.Config)) {
	t.Helper()
	tok, err := cl.c.Credentials.Create(context.Background(), identity.Bootstrap, "id-"+name, identity.Worker)
	if err != nil {
		t.Fatal(err)
	}
	conn := cl.dial(t, tok)
	cfg := worker.Config{Conn: conn.Conn(), Name: name, Threads: 1, HashMB: 8, BenchNPS: 1_000_000, Grace: time.Second,
		Builtin: builtin.New, Retry: clusterclient.Policy{Base: 20 * time.Millisecond, Cap: 200 * time.Millisecond}}
	adjust(&cfg)
	w, err := worker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.Run(ctx)
	}()
	cl.stop = append(cl.stop, func() { cancel(); wg.Wait() })
}

// browser is an HTTP client that keeps cookies by name, Secure ones too
// (the server is on loopback, where browsers keep them: net/http's jar
// does not).
type browser struct {
	t       testing.TB
	base    string
	cookies map[string]string
	hc      *http.Client
}

func (cl *cluster) browser(t testing.TB) *browser {
	return &browser{t: t, base: cl.web.URL, cookies: map[string]string{},
		hc: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type response struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (b *browser) do(req *http.Request) response {
	b.t.Helper()
	for k, v := range b.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c.Value
		}
	}
	return response{status: resp.StatusCode, body: string(body), location: resp.Header.Get("Location"), header: resp.Header}
}

func (b *browser) get(path string) response {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

// post sends form as the pages' forms do: the CSRF token in the action
// URL's query (where admission reads it, before the body) and the body.
func (b *browser) post(path string, form url.Values) response {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.base+withCSRF(path, form.Get("csrf")), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// withCSRF is path with the CSRF token in its query, as the pages' form
// actions carry it ("" leaves path as it is).
func withCSRF(path, token string) string {
	if token == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "csrf=" + url.QueryEscape(token)
}

// csrf loads a page and returns its form token.
func (b *browser) csrf() string {
	b.t.Helper()
	r := b.get("/signin")
	i := strings.Index(r.body, `name="csrf" value="`)
	if i < 0 {
		b.t.Fatalf("no CSRF token on /signin: %s", r.body)
	}
	rest := r.body[i+len(`name="csrf" value="`):]
	return rest[:strings.IndexByte(rest, '"')]
}

func (b *browser) signIn(token string) {
	b.t.Helper()
	r := b.post("/signin", url.Values{"csrf": {b.csrf()}, "token": {token}})
	if r.status != http.StatusSeeOther {
		b.t.Fatalf("sign in: %d %s", r.status, r.body)
	}
}

// job reads a job's snapshot through gRPC, as arbiter status does.
func (cl *cluster) job(t testing.TB, c *clusterclient.Client, id string) *arbiterv1.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatalf("get job %s: %v", id, err)
	}
	return resp.GetJob()
}

func (cl *cluster) waitJob(t testing.TB, c *clusterclient.Client, id string, limit time.Duration, what string, cond func(*arbiterv1.Job) bool) *arbiterv1.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j := cl.job(t, c, id)
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: not %s after %v: %v", id, what, limit, j)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var _ = grpc.NewServer
var _ = fmt.Sprint

// sessionReporter is what the tests use of the verify kind's workload
// (kinds/verify, which this test binary registers through
// kinds_ext_test.go; it imports this package, so these files cannot
// name it): storing a session's report.
type sessionReporter interface {
	VerifySessions
	Report(ctx context.Context, caller identity.Identity, sid string, summary *arbiterv1.VerifySessionSummary,
		first uint32, positions []*arbiterv1.VerifyPositionReport) (int, error)
}

// verifyOf is the verify kind's workload of c.
func verifyOf(c *coordinator.Coordinator) sessionReporter {
	for _, wl := range c.Core.Workloads() {
		if r, ok := wl.(sessionReporter); ok {
			return r
		}
	}
	panic("the verify kind is not registered")
}
