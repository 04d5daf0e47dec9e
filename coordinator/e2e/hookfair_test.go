//go:build unix

package e2e

// Webhooks of one user cannot stall another's: a coordinator process and
// a worker process; one client's twenty hooks point at receivers that
// accept the request and never answer, another client's one hook at a
// receiver that answers at once.

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/hooks"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/proctest"
)

// hangingReceiver accepts webhook requests and answers none until the
// test ends; it counts the requests that arrived.
type hangingReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	arrived int
}

func newHangingReceiver(t *testing.T) *hangingReceiver {
	r := &hangingReceiver{}
	release := make(chan struct{})
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.arrived++
		r.mu.Unlock()
		select {
		case <-release:
		case <-req.Context().Done():
		}
	}))
	t.Cleanup(r.srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: Close waits for the handlers
	return r
}

func (r *hangingReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arrived
}

// TestWebhooksOfOneUserCannotStallAnother: mallory's job finishes first
// and her twenty hooks' deliveries hang (the receivers got the requests:
// the slow ones are being attempted); bob's job finishes after, and his
// delivery must arrive within 10 s of his job's end. Control: bob's
// receiver gets exactly one finished delivery for his job, and none of
// mallory's deliveries is delivered.
func TestWebhooksOfOneUserCannotStallAnother(t *testing.T) {
	addr, httpAddr, data := proctest.FreeAddr(t), proctest.FreeAddr(t), t.TempDir()
	coordinator(t, addr, data, "--http", httpAddr, "--hook-allow", "127.0.0.1")
	startWorker(t, addr)
	mallory, bob := newCredential(t, addr, "client"), newCredential(t, addr, "client")
	hang, quick := newHangingReceiver(t), newHookReceiver(t, 0)
	addHook := func(tok, url string) {
		t.Helper()
		out, code := cli(t, "hook", "add", url, "--events", "finished", "--api", "http://"+httpAddr, "--token", tok)
		if code != 0 {
			t.Fatalf("hook add %s: exit %d: %s", url, code, out)
		}
	}
	for i := 0; i < hooks.MaxHooksPerIdentity; i++ {
		addHook(mallory, hang.srv.URL+"/slow/"+string(rune('a'+i)))
	}
	addHook(bob, quick.srv.URL+"/bob")

	finish := func(tok string) *arbiterv1.Job {
		t.Helper()
		conn := dial(t, addr, tok)
		j := submit(t, conn, &arbiterv1.PerftSpec{Depth: 3})
		return waitFor(t, conn, j.GetJobId(), 2*time.Minute, "done", done)
	}
	malloryJob := finish(mallory)
	deadline := time.Now().Add(30 * time.Second)
	for hang.count() < hooks.DefaultPerOwner {
		if time.Now().After(deadline) {
			t.Fatalf("mallory's slow receivers got %d requests in 30 s, want %d (her deliveries did not start)", hang.count(), hooks.DefaultPerOwner)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("mallory's job %s done; %d of her deliveries hang", malloryJob.GetJobId(), hang.count())

	bobJob := finish(bob)
	ended := bobJob.GetFinishedAt().AsTime()
	var got []hookRequest
	for {
		got = quick.requests()
		if len(got) > 0 {
			break
		}
		if time.Since(ended) > 10*time.Second {
			t.Fatalf("bob's delivery not arrived 10 s after his job %s ended (mallory's slow receivers got %d requests)", bobJob.GetJobId(), hang.count())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("bob's delivery arrived %v after his job ended, while %d requests to mallory's receivers hung",
		time.Since(ended).Round(time.Millisecond), hang.count())
	time.Sleep(500 * time.Millisecond) // a second copy would come now
	got = quick.requests()
	if len(got) != 1 || got[0].header.Get("X-Arbiter-Event") != "finished" || !strings.Contains(got[0].header.Get("X-Arbiter-Delivery"), bobJob.GetJobId()) {
		t.Fatalf("bob's receiver got %d requests, first %v", len(got), got[0].header)
	}
	db, err := openStoreDB(data)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var delivered int
	if err := db.QueryRow("SELECT COUNT(*) FROM hook_deliveries WHERE job_id=? AND state='delivered'", malloryJob.GetJobId()).Scan(&delivered); err != nil || delivered != 0 {
		t.Fatalf("mallory's deliveries delivered: %d (%v); her receivers never answer", delivered, err)
	}
}
