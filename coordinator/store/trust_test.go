package store

import (
	"context"
	"testing"
	"time"
)

// Trust on both backends: confirmations add up, a purge deletes exactly
// the liar's batches and games with the new SPRT state, the exclusion and
// the liar's mark in one transaction, and all of it is there after the
// store is opened again.
func TestTrustStored(t *testing.T) {
	eachBackend(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(1_700_000_000, 0)
		j := &Job{ID: "s1", Kind: "sprt", State: StateRunning, CreatedAt: at}
		if err := s.CreateTest(ctx, j, &Test{Spec: []byte("spec"), BatchPairs: 1, SPRT: "before"}); err != nil {
			t.Fatal(err)
		}
		for _, w := range []Worker{{ID: "w-honest", Name: "h", Owner: "farm", RegisteredAt: at}, {ID: "w-liar", Name: "l", Owner: "mallory", RegisteredAt: at}} {
			if err := s.PutWorker(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		for idx, w := range []string{"w-honest", "w-liar", "w-honest"} {
			b := &Batch{UnitID: "s1." + string(rune('0'+idx)), JobID: "s1", Idx: idx, WorkerID: w, Pairs: 1, Penta: [5]int64{0, 0, 1, 0, 0},
				Draws: 2, At: at}
			if err := s.CommitBatch(ctx, b, []string{"[Event \"a\"]", "[Event \"b\"]"}, "state", nil, nil); err != nil {
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
		if err := s.PurgeIdentity(ctx, p); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if s, err = open(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		bs, err := s.Batches(ctx, "s1")
		if err != nil || len(bs) != 2 || bs[0].Idx != 0 || bs[1].Idx != 2 {
			t.Fatalf("batches after the purge: %+v %v", bs, err)
		}
		if n, _ := s.CountPGNs(ctx, "s1"); n != 4 {
			t.Fatalf("%d games after the purge, want the kept batches' 4", n)
		}
		if row, _ := s.Test(ctx, "s1"); row.SPRT != "after" {
			t.Fatalf("SPRT state %q", row.SPRT)
		}
		recs, err := s.TrustRecords(ctx)
		if err != nil || len(recs) != 1 || recs[0].Identity != "mallory" || recs[0].Agreed != 3 || !recs[0].LiedAt.Equal(at) ||
			recs[0].Reason != "its games differ" {
			t.Fatalf("trust %+v %v", recs, err)
		}
		if m, err := s.JobDistrust(ctx, "s1"); err != nil || m["mallory"] != "its games differ" || len(m) != 1 {
			t.Fatalf("excluded from s1: %v %v", m, err)
		}
		// A second purge of the same identity changes nothing it should not.
		if err := s.PurgeIdentity(ctx, &Purge{JobID: "s1", Identity: "mallory", Reason: "again", At: at}); err != nil {
			t.Fatal(err)
		}
		if bs, _ := s.Batches(ctx, "s1"); len(bs) != 2 {
			t.Fatalf("%d batches after a second purge", len(bs))
		}
	})
}
