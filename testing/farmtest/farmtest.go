// Package farmtest starts a farm in the test's process for the tests of
// the kinds of job: a real coordinator (local/localcluster, every kind of
// kinds/install and any the test binary registers) serving gRPC, its web
// pages and its JSON API on loopback, with workers that play the
// embedded engine. Only tests import it.
package farmtest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	"github.com/arbiter-chess/arbiter/coordinator/web"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// Farm is a serving coordinator with its workers; Stop runs at the
// test's end.
type Farm struct {
	*localcluster.Cluster
	// URL is the pages' and the API's base URL (http://127.0.0.1:PORT).
	URL string
}

// Start serves a coordinator with its pages and API and starts workers
// (0 for none); each option changes the farm's configuration first.
func Start(t testing.TB, workers int, options ...func(*localcluster.Config)) *Farm {
	t.Helper()
	pages := func(c *coordinator.Coordinator, st *store.Store) (http.Handler, error) {
		return web.New(context.Background(), web.Config{Core: c.Core, Games: c.Games(),
			Credentials: c.Credentials, Accounts: c.Accounts, Store: st, Logger: zap.NewNop(), Follows: c.Hooks, Hooks: c.Hooks,
			Trust: c.Trust, Admission: c.Admission})
	}
	cfg := localcluster.Config{Workers: workers, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond, HTTP: "127.0.0.1:0", Pages: pages, API: httpapi.ForCoordinator}}
	for _, o := range options {
		o(&cfg)
	}
	cl, err := localcluster.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Stop)
	return &Farm{Cluster: cl, URL: "http://" + cl.HTTPAddr()}
}

// Client dials the coordinator with the admin's token.
func (f *Farm) Client(t testing.TB) *clusterclient.Client {
	t.Helper()
	c, err := f.Cluster.Client()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Do sends a request to the pages or the API (path from /) with the
// admin's credential (as the API's bearer token and as the pages'
// sign-in cookie), and returns the status and body.
func (f *Farm) Do(t testing.TB, method, path string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.Token())
	req.AddCookie(&http.Cookie{Name: "__Host-arbiter-session", Value: f.Token()})
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// WorkerCapabilities waits, through c, until a worker of the farm has
// registered, and returns what it offers (the capabilities a registered
// runner or the worker's engines add); the test fails when ctx ends
// first, or when the worker offers one of want not.
func WorkerCapabilities(ctx context.Context, t testing.TB, c *clusterclient.Client, want ...string) []string {
	t.Helper()
	for ctx.Err() == nil {
		ws, err := c.Admin.ListWorkers(ctx, &arbiterv1.ListWorkersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if list := ws.GetWorkers(); len(list) > 0 {
			caps := list[0].GetCapabilities().GetCapabilities()
			for _, w := range want {
				if !slices.Contains(caps, w) {
					t.Fatalf("the worker offers %q, without %q", caps, w)
				}
			}
			return caps
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no worker registered: %v", ctx.Err())
	return nil
}
