package netloop

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/arbiter-chess/arbiter/client/datagenclient"
	"github.com/arbiter-chess/arbiter/engine/nnue"
	"github.com/arbiter-chess/arbiter/local/localcluster"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// defaultNetOf is the SHA-256 of the default net of engine on the farm
// ("" when none).
func defaultNetOf(t *testing.T, c arbiterv1.ArtifactServiceClient, engine string) string {
	t.Helper()
	resp, err := c.ListArtifacts(context.Background(), &arbiterv1.ListArtifactsRequest{Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range resp.GetArtifacts() {
		if slices.Contains(a.GetDefaultFor(), engine) {
			return a.GetSha256()
		}
	}
	return ""
}

// TestFarmShipSetsTheDefaultNet: a ship step on the farm (a real
// coordinator on loopback) uploads the shipped net and makes it the
// default net of --engine's name there (what `arbiter net default dev`
// shows), as well as DIR/best.nnue. Before it, dev has no default net
// (the control).
func TestFarmShipSetsTheDefaultNet(t *testing.T) {
	farm := farmtest.Start(t, 0)
	c := farm.Client(t)
	arts := arbiterv1.NewArtifactServiceClient(c.Conn())
	r := tinyRunner(t, "epochs=1,batch=64", 24)
	r.Out, r.Farm = io.Discard, c

	nn := trainedNet(t, r)
	if got := defaultNetOf(t, arts, "dev"); got != "" {
		t.Fatalf("dev has a default net before the ship: %s", got)
	}
	s := &Step{Gen: 1, Kind: KindShip, Key: key(KindShip, nn.SHA), New: nn}
	if err := r.runStep(context.Background(), Plan{Next: s}); err != nil {
		t.Fatal(err)
	}
	if got := defaultNetOf(t, arts, "dev"); got != nn.SHA {
		t.Fatalf("dev's default net after the ship: %q, want %s", got, nn.SHA)
	}
	if best, err := os.ReadFile(r.Dir.path("best.nnue")); err != nil || sha(best) != nn.SHA {
		t.Fatalf("best.nnue: %v", err)
	}
	if d := r.Dir.Done(s.Key); d == nil || d.Shipped != nn.SHA {
		t.Fatalf("the ship step's done marker: %+v", d)
	}
}

// trainedNet writes the net a train step made (here the embedded net's
// bytes) in r's directory and returns it.
func trainedNet(t *testing.T, r *Runner) Net {
	t.Helper()
	b := nnue.DefaultBytes()
	if b == nil {
		t.Skip("no embedded net in this build")
	}
	trainKey := "train-0123456789ab"
	if err := os.MkdirAll(r.Dir.StepDir(trainKey), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir.StepDir(trainKey), "net.nnue"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return Net{SHA: sha(b), Step: trainKey, Gen: 1}
}

// TestFarmDatagenPlaysTheBestNet: once a net has shipped, a farm
// datagen step submits its DATAGEN job with that net (uploaded; the job's
// engine names its full hash), and the workers play it to the end; the
// first generation's (the control) names no net: the embedded one.
func TestFarmDatagenPlaysTheBestNet(t *testing.T) {
	farm := farmtest.Start(t, 1, func(c *localcluster.Config) { c.UploadedEngines = true })
	c := farm.Client(t)
	ds, err := datagenclient.Get()
	if err != nil {
		t.Fatal(err)
	}
	r := tinyRunner(t, "epochs=1,batch=64", 24)
	r.Out, r.Farm = io.Discard, c
	nn := trainedNet(t, r)
	for _, best := range []Net{{SHA: EmbeddedSHA()}, nn} {
		s := &Step{Gen: best.Gen + 1, Kind: KindDatagen, Key: key(KindDatagen, best.SHA, best.Step), Best: best, Seed: 1}
		if err := r.runStep(context.Background(), Plan{Next: s}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(r.jobFile(s.Key))
		j, err := c.Jobs.GetJob(context.Background(), &arbiterv1.GetJobRequest{JobId: string(b[:len(b)-1])})
		if err != nil {
			t.Fatal(err)
		}
		got := ds.Of(j.GetJob()).GetSpec().GetEngine().GetNet().GetSha256()
		want := ""
		if best.Step != "" {
			want = best.SHA
		}
		if got != want {
			t.Errorf("generation %d's DATAGEN job plays net %q, want %q", s.Gen, got, want)
		}
		if d := r.Dir.Done(s.Key); d == nil || d.Positions != 300 {
			t.Errorf("generation %d's datagen step: %+v", s.Gen, d)
		}
	}
}
