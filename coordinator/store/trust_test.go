package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"
)

// The purge of the rows of the jobs of kind trustStub: it records each
// purge it is given and adds an event in the purge's transaction; failing
// makes it fail.
var (
	trustStubPurges []string
	trustStubFail   bool
)

func init() {
	RegisterPurge([]string{"trust-stub"}, func(ctx context.Context, tx *sql.Tx, p *Purge) error {
		trustStubPurges = append(trustStubPurges, p.JobID+" "+p.SPRT)
		if trustStubFail {
			return errors.New("the kind's rows refused")
		}
		return InsertEventsTx(ctx, tx, []Event{{JobID: p.JobID, Kind: "rows purged", At: p.At}})
	})
}

// Trust on both backends: confirmations add up; a purge runs the job
// kind's PurgeRows (the test kind's deletes its batches: kinds/test's
// TestStoredTests) in the same transaction as the exclusion, the liar's
// mark and the events, so the kind's failure stores none of them; a job
// of a kind without one keeps its rows; all of it is there after the
// store is opened again.
func TestTrustStored(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		trustStubPurges, trustStubFail = nil, false
		ctx := context.Background()
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(1_700_000_000, 0)
		for _, j := range []*Job{{ID: "s1", Kind: "trust-stub", State: StateRunning, CreatedAt: at}, {ID: "t1", Kind: "other", State: StateRunning, CreatedAt: at}} {
			if err := s.CreateKindJob(ctx, j, func(context.Context, *sql.Tx) error { return nil }); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range []Worker{{ID: "w-honest", Name: "h", Owner: "farm", RegisteredAt: at}, {ID: "w-liar", Name: "l", Owner: "mallory", RegisteredAt: at}} {
			if err := s.PutWorker(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 {
			if err := s.AddAgreed(ctx, "mallory", 1); err != nil {
				t.Fatal(err)
			}
		}
		owners, err := s.WorkerOwners(ctx, []string{"w-honest", "w-liar", "w-gone"})
		if err != nil || len(owners) != 2 || owners["w-liar"] != "mallory" {
			t.Fatalf("owners %v %v", owners, err)
		}
		p := &Purge{JobID: "s1", Identity: "mallory", Reason: "its games differ", At: at, WorkerIDs: []string{"w-liar"},
			SPRT: "after", SetSPRT: true, Events: []Event{{JobID: "s1", WorkerID: "w-liar", Kind: "excluded", Detail: "its games differ", At: at}}}
		trustStubFail = true
		if err := s.PurgeIdentity(ctx, p); err == nil {
			t.Fatal("a purge whose kind's rows failed was stored")
		}
		if recs, _ := s.TrustRecords(ctx); len(recs) != 1 || !recs[0].LiedAt.IsZero() {
			t.Fatalf("a failed purge marked the liar: %+v", recs)
		}
		if m, _ := s.JobDistrust(ctx, "s1"); len(m) != 0 {
			t.Fatalf("a failed purge excluded: %v", m)
		}
		trustStubFail = false
		if err := s.PurgeIdentity(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := s.PurgeIdentity(ctx, &Purge{JobID: "t1", Identity: "eve", Reason: "lied in t1", At: at, WorkerIDs: []string{"w-eve"}}); err != nil {
			t.Fatal(err)
		}
		if want := []string{"s1 after", "s1 after"}; !slices.Equal(trustStubPurges, want) {
			t.Fatalf("the kind's purges: %q, want %q (none for t1, of another kind)", trustStubPurges, want)
		}
		s.Close()
		if s, err = open(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if ev, _ := s.Events(ctx, "s1"); len(ev) != 2 || ev[0].Kind != "rows purged" || ev[1].Kind != "excluded" {
			t.Fatalf("events of s1 after the purge: %+v", ev)
		}
		recs, err := s.TrustRecords(ctx)
		if err != nil || len(recs) != 2 || recs[0].Identity != "eve" || recs[1].Identity != "mallory" || recs[1].Agreed != 3 ||
			!recs[1].LiedAt.Equal(at) || recs[1].Reason != "its games differ" {
			t.Fatalf("trust %+v %v", recs, err)
		}
		if m, err := s.JobDistrust(ctx, "s1"); err != nil || m["mallory"] != "its games differ" || len(m) != 1 {
			t.Fatalf("excluded from s1: %v %v", m, err)
		}
		if m, err := s.JobDistrust(ctx, "t1"); err != nil || m["eve"] != "lied in t1" || len(m) != 1 {
			t.Fatalf("excluded from t1: %v %v", m, err)
		}
	})
}
