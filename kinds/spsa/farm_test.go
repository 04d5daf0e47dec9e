package spsa_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator/gamepair/gamepairtest"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestTuneOnAFarm: with the kind installed as a program installs it
// (kinds/install), a tune submitted through the typed SubmitSpsa (which
// grpcapi keeps a release, creating a job of kind jobkind.SPSA) is played
// by a real worker to its end; DownloadPGN finds its games in the kind's
// workload (grpcapi asks every workload with Has and PGNs, the tests'
// being the default, which has no such job), and its page is served.
// Controls: every game of the tune is in the PGN (the tests' workload
// would answer none), and a job nobody has is refused.
func TestTuneOnAFarm(t *testing.T) {
	farm := farmtest.Start(t, 1)
	c := farm.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ops := make([]*arbiterv1.Opening, 4)
	for i := range ops {
		ops[i] = &arbiterv1.Opening{Index: uint32(i), MovesUci: []string{gamepairtest.BookMoves[i]}}
	}
	spec := &arbiterv1.SpsaSpec{
		Engine: &arbiterv1.EngineSpec{Name: "dev", Command: matchspec.Embedded, Protocol: "builtin"},
		Params: []*arbiterv1.SpsaParam{{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002}},
		Pairs:  2, BatchPairs: 1, TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 300}},
		Openings: ops, BookName: "test book", BookOrder: "random", Seed: 7,
	}
	resp, err := c.Jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	id := resp.GetJob().GetJobId()
	if resp.GetJob().GetKind() != "spsa" {
		t.Fatalf("SubmitSpsa made a job of kind %q", resp.GetJob().GetKind())
	}
	j, err := c.WatchJob(ctx, id, clusterclient.Interactive, func(*arbiterv1.Job) {})
	if err != nil {
		t.Fatal(err)
	}
	if j.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		t.Fatalf("tune %s ended %s", id, j.GetState())
	}
	if n, err := pgnGames(ctx, c, id); err != nil || n != 4 {
		t.Fatalf("DownloadPGN of tune %s: %d games, %v; want the 4 it played", id, n, err)
	}
	if _, err := pgnGames(ctx, c, "t-no-such-tune"); err == nil {
		t.Error("DownloadPGN of a job nobody has: no error")
	}
	if code, body := farm.Do(t, "GET", "/tunes/"+id, nil); code != 200 || !strings.Contains(body, "RFPMargin") {
		t.Errorf("/tunes/%s: %d, without its parameter\n%s", id, code, body)
	}
}

// pgnGames downloads a job's PGN and counts its games.
func pgnGames(ctx context.Context, c *clusterclient.Client, id string) (int, error) {
	stream, err := c.Jobs.DownloadPGN(ctx, &arbiterv1.DownloadPGNRequest{JobId: id})
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += int(r.GetGames())
	}
}
