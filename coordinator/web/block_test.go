package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/coordinator/testview"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// An admin blocks a worker's identity on the workers page: its leases
// end and it plays no more; a client may not; the block survives a
// restart; unblocked, the worker plays again.
func TestBlockWorker(t *testing.T) {
	dir := t.TempDir()
	cl := newCluster(t, clusterOpts{dir: dir})
	ctx := context.Background()
	cl.startWorker(t, "w1")
	ref, err := cl.c.Core.Create(ctx, cl.carol(), testview.Kind, evenSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	client := cl.dial(t, cl.client)
	cl.waitJob(t, client, ref.ID, 60*time.Second, "playing", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetGames() > 0 })

	carol := cl.browser(t)
	carol.signIn(cl.client)
	r := carol.post("/workers/block", url.Values{"csrf": {carol.csrf()}, "identity": {"id-w1"}, "reason": {"x"}})
	mustContain(t, "client blocks", r, http.StatusForbidden, "block workers")
	if len(cl.c.Core.Blocked()) != 0 {
		t.Fatal("a client's block was kept")
	}
	admin := cl.browser(t)
	admin.signIn(adminToken)
	mustContain(t, "workers page", admin.get("/workers"), http.StatusOK, `id="block-form"`, "No worker or identity is blocked")
	r = admin.post("/workers/block", url.Values{"csrf": {admin.csrf()}, "identity": {"id-w1"}, "reason": {"plays skewed results"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("block: %d %s", r.status, r.body)
	}
	mustContain(t, "blocked", admin.get("/workers"), http.StatusOK, "plays skewed results", `data-field="blocked"`, "Unblock")
	j := cl.waitJob(t, client, ref.ID, 20*time.Second, "without leases", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetBatchesLeased() == 0 })
	games := j.GetMatchProgress().GetGames()
	time.Sleep(2 * time.Second)
	if j := cl.job(t, client, ref.ID); j.GetMatchProgress().GetGames() != games || j.GetMatchProgress().GetBatchesLeased() != 0 {
		t.Fatalf("a blocked worker played on: %d games, then %d (%d leased)", games, j.GetMatchProgress().GetGames(), j.GetMatchProgress().GetBatchesLeased())
	}
	// The block is stored: a coordinator restarted on the store keeps it.
	blocks, err := client.Admin.ListBlocked(ctx, &arbiterv1.ListBlockedRequest{})
	if err != nil || len(blocks.GetBlocked()) != 1 || blocks.GetBlocked()[0].GetIdentity() != "id-w1" || blocks.GetBlocked()[0].GetBy() == "" {
		t.Fatalf("ListBlocked: %v %v", blocks, err)
	}
	// Unblocked, it plays again.
	r = admin.post("/workers/block", url.Values{"csrf": {admin.csrf()}, "identity": {"id-w1"}, "action": {"unblock"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("unblock: %d %s", r.status, r.body)
	}
	cl.waitJob(t, client, ref.ID, 60*time.Second, "playing again", func(j *arbiterv1.Job) bool { return j.GetMatchProgress().GetGames() > games })
	mustContain(t, "unblock twice", admin.post("/workers/block", url.Values{"csrf": {admin.csrf()}, "identity": {"id-w1"}, "action": {"unblock"}}),
		http.StatusNotFound, "not blocked")
	if _, err := cl.c.Core.SetBlock(ctx, cl.carol(), "", "", true, ""); err == nil {
		t.Fatal("a client blocked")
	}
	mustAudit(t, cl, "admin", "worker.block", "identity:id-w1", "plays skewed results")
	mustAudit(t, cl, "admin", "worker.unblock", "identity:id-w1", "")
}

// Blocks are kept in the store: a coordinator opened on it again has them.
func TestBlocksSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	cl := newCluster(t, clusterOpts{dir: dir})
	admin := cl.browser(t)
	admin.signIn(adminToken)
	r := admin.post("/workers/block", url.Values{"csrf": {admin.csrf()}, "identity": {"somebody"}, "reason": {"tampered"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("block: %d %s", r.status, r.body)
	}
	mustContain(t, "unknown worker", admin.post("/workers/block", url.Values{"csrf": {admin.csrf()}, "worker": {"w-nope"}}), http.StatusNotFound, "w-nope")
	cl.stopNow()
	again := newCluster(t, clusterOpts{dir: dir, reopen: true})
	if bs := again.c.Core.Blocked(); len(bs) != 1 || bs[0].Identity != "somebody" || bs[0].Reason != "tampered" {
		t.Fatalf("after restart: %+v", bs)
	}
}
