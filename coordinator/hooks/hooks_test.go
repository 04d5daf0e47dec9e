package hooks_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// receiver is a webhook endpoint that fails its first failures requests
// with 500 and records every request.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	failures int
	got      []delivery
}

type delivery struct {
	header http.Header
	body   []byte
	status int
}

func newReceiver(t *testing.T, failures int) *receiver {
	r := &receiver{failures: failures}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		status := http.StatusNoContent
		if r.failures > 0 {
			r.failures--
			status = http.StatusInternalServerError
		}
		r.got = append(r.got, delivery{header: req.Header.Clone(), body: body, status: status})
		w.WriteHeader(status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

// TestWebhooksDeliverOnce runs a test to its end on a real cluster: a
// receiver gets exactly one signed finished delivery with the result
// block, one that fails twice gets it on the third attempt, a hook of
// another user's gets nothing; the deliveries are recorded with their
// attempts.
func TestWebhooksDeliverOnce(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	var hc coordinator.HooksConfig
	hc.Allow, hc.PublicURL = []string{"127.0.0.1"}, "https://farm.example.org/"
	hc.Interval, hc.RetryBase = 50*time.Millisecond, 100*time.Millisecond
	hc.JobJSON = func(j *arbiterv1.Job) any { return jobreport.NewJobJSON(j) }
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "hooks-admin", Hooks: hc}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c := cl.Server.Coordinator()
	ctx := context.Background()
	carol := identity.Identity{Name: "carol", Role: identity.Client}
	dave := identity.Identity{Name: "dave", Role: identity.Client}
	admin := identity.Identity{Name: "admin", Role: identity.Admin}

	ok, flaky, other := newReceiver(t, 0), newReceiver(t, 2), newReceiver(t, 0)
	hOK, err := c.Hooks.Add(ctx, carol, ok.URL+"/hook", []string{"finished", "failed"}, "json", "own")
	if err != nil {
		t.Fatal(err)
	}
	hFlaky, err := c.Hooks.Add(ctx, admin, flaky.URL, []string{"finished"}, "discord", "farm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Hooks.Add(ctx, dave, other.URL, []string{"finished"}, "slack", "own"); err != nil {
		t.Fatal(err)
	}

	// carol's test, submitted through the API with carol's credential.
	tok, err := c.Credentials.Create(ctx, identity.Bootstrap, "carol", identity.Client)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := c.InProcess()
	if err != nil {
		t.Fatal(err)
	}
	jobs := arbiterv1.NewJobServiceClient(conn)
	spec := &arbiterv1.MatchSpec{EngineA: &arbiterv1.EngineSpec{Name: "a", Command: "embedded", Protocol: "builtin"},
		EngineB:     &arbiterv1.EngineSpec{Name: "b", Command: "embedded", Protocol: "builtin"},
		TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 200}}, Games: 4, BatchPairs: 1,
		Openings: []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}}, BookName: "e4"}
	resp, err := jobs.SubmitMatch(withToken(ctx, tok), &arbiterv1.SubmitMatchRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()

	deadline := time.Now().Add(60 * time.Second)
	for len(ok.deliveries()) < 1 || len(flaky.deliveries()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("deliveries: %d to carol's hook, %d to the flaky farm hook", len(ok.deliveries()), len(flaky.deliveries()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Scans and delivery passes go on: still exactly one success each.
	time.Sleep(500 * time.Millisecond)
	got := ok.deliveries()
	if len(got) != 1 {
		t.Fatalf("carol's hook got %d deliveries, want 1", len(got))
	}
	d := got[0]
	if d.header.Get("X-Arbiter-Event") != "finished" || d.header.Get("X-Arbiter-Delivery") != hOK.ID+"/"+id+"/finished" {
		t.Errorf("headers: %v", d.header)
	}
	if !hooks.Verify(hOK.Secret, d.body, d.header.Get("X-Arbiter-Signature-256")) {
		t.Errorf("signature %q does not verify with the hook's secret", d.header.Get("X-Arbiter-Signature-256"))
	}
	if hooks.Verify("another secret", d.body, d.header.Get("X-Arbiter-Signature-256")) {
		t.Error("the signature verifies with another secret")
	}
	var p hooks.Payload
	var job jobreport.JobJSON
	if err := json.Unmarshal(d.body, &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.Job, &job); err != nil {
		t.Fatal(err)
	}
	if p.Event != "finished" || job.JobID != id || job.State != "done" || p.URL != "https://farm.example.org/tests/"+id ||
		!strings.Contains(p.Block, "Games | N: 4 W: ") || !strings.HasPrefix(p.Block, "Elo   | ") ||
		!strings.HasSuffix(p.Block, "\nhttps://farm.example.org/tests/"+id+"\n") || !strings.Contains(p.FishtestBlock, "Total: 4 W: ") {
		t.Errorf("payload: %+v", p)
	}
	fl := flaky.deliveries()
	if len(fl) != 3 || fl[0].status != 500 || fl[1].status != 500 || fl[2].status != 204 {
		t.Fatalf("flaky hook: %d deliveries", len(fl))
	}
	for _, x := range fl {
		if string(x.body) != string(fl[0].body) || x.header.Get("X-Arbiter-Delivery") != hFlaky.ID+"/"+id+"/finished" {
			t.Errorf("a retry differs from the first attempt")
		}
	}
	var discord struct{ Content string }
	if err := json.Unmarshal(fl[2].body, &discord); err != nil || !strings.Contains(discord.Content, "**test "+id+" finished: a vs b**\n```\nElo   | ") {
		t.Errorf("discord payload: %v %s", err, fl[2].body)
	}
	if n := len(other.deliveries()); n != 0 {
		t.Errorf("dave's hook got %d deliveries of carol's test", n)
	}
	list, err := c.Hooks.Deliveries(ctx, admin, hFlaky.ID, 10)
	if err != nil || len(list) != 1 || list[0].State != "delivered" || list[0].Attempts != 3 || list[0].LastStatus != 204 {
		t.Errorf("flaky hook's deliveries: %v %+v", err, list)
	}
	if _, err := c.Hooks.Deliveries(ctx, dave, hOK.ID, 10); err == nil {
		t.Error("dave reads carol's hook's deliveries")
	}
	if hs, _ := c.Hooks.List(carol); len(hs) != 1 || hs[0].Secret != "" {
		t.Errorf("carol's hooks: %+v", hs)
	}
}

// TestWebhookDestinations: URLs that are not http(s), carry credentials,
// or name a loopback, private or link-local address are refused when the
// hook is made, with a reason; an address checked only at connection
// time (a name, as a rebinding DNS would give) is refused there too.
func TestWebhookDestinations(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, HashMB: 1, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "hooks-admin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	m := cl.Server.Coordinator().Hooks
	ctx := context.Background()
	carol := identity.Identity{Name: "carol", Role: identity.Client}
	for url, want := range map[string]string{
		"ftp://example.org/x":            "http:// or https://",
		"file:///etc/passwd":             "http:// or https://",
		"https://user:pw@example.org/":   "no user or password",
		"http://127.0.0.1:8080/":         "loopback",
		"http://[::1]/":                  "loopback",
		"http://10.1.2.3/":               "private",
		"http://192.168.0.1/":            "private",
		"http://169.254.169.254/latest/": "link-local",
		"http://[::ffff:127.0.0.1]/":     "loopback",
		"http://100.64.0.1/":             "private",
		"http://0.0.0.0/":                "unspecified",
		"http://localhost:9/":            "localhost",
		"https:///nohost":                "no host",
	} {
		if _, err := m.Add(ctx, carol, url, []string{"finished"}, "json", "own"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("hook %s: %v; want an error with %q", url, err, want)
		}
	}
	for _, bad := range []struct {
		events []string
		format string
		scope  string
		who    identity.Identity
		want   string
	}{
		{nil, "json", "own", carol, "at least one"},
		{[]string{"started"}, "json", "own", carol, `"started" is not an event`},
		{[]string{"finished"}, "teams", "own", carol, "want json, discord or slack"},
		{[]string{"finished"}, "json", "farm", carol, "only admins"},
		{[]string{"finished"}, "json", "everyone", carol, `scope "everyone": want own, farm or followed`},
		{[]string{"finished"}, "json", "own", identity.Identity{Name: "w", Role: identity.Worker}, "may not add webhooks"},
	} {
		if _, err := m.Add(ctx, bad.who, "https://example.org/hook", bad.events, bad.format, bad.scope); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if hs, _ := m.List(identity.Identity{Name: "admin", Role: identity.Admin}); len(hs) != 0 {
		t.Errorf("refused hooks were stored: %+v", hs)
	}
	// A public name is accepted; at connection time its address is what
	// counts. hooks.DialCheck is the check the sender runs on the
	// resolved address.
	if err := hooks.CheckDestination(m, "127.0.0.1:80"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("dial check of loopback: %v", err)
	}
	if err := hooks.CheckDestination(m, "93.184.216.34:443"); err != nil {
		t.Errorf("dial check of a public address: %v", err)
	}
	// A name is resolved when the delivery connects: one that resolves to
	// loopback then (as a rebinding DNS answers) is refused, and the
	// receiver listening there gets nothing.
	rcv := newReceiver(t, 0)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rcv.URL, "http://"))
	h := &store.Hook{ID: "hx", URL: "http://localhost:" + port + "/x", Events: "finished", Format: "json", Secret: "s"}
	status, err := hooks.Send(m, h, &store.Delivery{ID: "hx/s1/finished", Event: "finished", Payload: "{}"})
	if err == nil || status != 0 || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address, refused") {
		t.Errorf("delivery to a name that resolves to loopback: %d %v", status, err)
	}
	if n := len(rcv.deliveries()); n != 0 {
		t.Errorf("the receiver on loopback got %d requests", n)
	}
}

func withToken(ctx context.Context, tok string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

// TestBlockedEvent: a test no worker can take (none is connected) sends
// one blocked delivery with the reason, to a hook of that event only.
func TestBlockedEvent(t *testing.T) {
	t.Setenv(auth.EnvToken, "")
	var hc coordinator.HooksConfig
	hc.Allow, hc.Interval = []string{"127.0.0.1"}, 100*time.Millisecond
	cl, err := localcluster.Start(localcluster.Config{Workers: 0, HashMB: 1, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, Token: "hooks-admin", Hooks: hc}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c := cl.Server.Coordinator()
	ctx := context.Background()
	admin := identity.Identity{Name: "admin", Role: identity.Admin}
	blocked, finished := newReceiver(t, 0), newReceiver(t, 0)
	if _, err := c.Hooks.Add(ctx, admin, blocked.URL, []string{"blocked"}, "slack", "own"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Hooks.Add(ctx, admin, finished.URL, []string{"finished"}, "json", "own"); err != nil {
		t.Fatal(err)
	}
	conn, err := c.InProcess()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := arbiterv1.NewJobServiceClient(conn).SubmitPerft(withToken(ctx, "hooks-admin"), &arbiterv1.SubmitPerftRequest{Spec: &arbiterv1.PerftSpec{Depth: 4}})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()
	for deadline := time.Now().Add(30 * time.Second); len(blocked.deliveries()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no blocked delivery")
		}
	}
	time.Sleep(500 * time.Millisecond)
	got := blocked.deliveries()
	var slack struct{ Text string }
	if len(got) != 1 || json.Unmarshal(got[0].body, &slack) != nil ||
		!strings.Contains(slack.Text, "*perft job "+id+" blocked: no worker connected") || got[0].header.Get("X-Arbiter-Event") != "blocked" {
		t.Errorf("blocked deliveries: %d: %s", len(got), got[0].body)
	}
	if n := len(finished.deliveries()); n != 0 {
		t.Errorf("the finished hook got %d deliveries", n)
	}
}
