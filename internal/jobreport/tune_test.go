package jobreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-chess/arbiter/internal/cliexit"
	"github.com/arbiter-chess/arbiter/internal/localcluster"
	"github.com/arbiter-chess/arbiter/internal/spsaplan"
	"github.com/arbiter-chess/arbiter/match/builtin"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spsa"
)

// A tune through a cluster in this process: RunTune submits it, follows
// it with a line per update, prints it and downloads every game; export
// prints the values status shows; the job list has its row.
func TestRunTuneOnCluster(t *testing.T) {
	cl, err := localcluster.Start(localcluster.Config{Workers: 1, Threads: 1, HashMB: 1, BenchNPS: 1_000_000, Builtin: builtin.New,
		Server: localcluster.ServerConfig{UnitDuration: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Stop()
	c, err := cl.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan, err := spsaplan.Parse(ctx, spsaplan.Flags{Engine: "name=dev,builtin,option.Hash=1", Each: "nodes=300",
		Openings: "file=../../books/uho-200.epd", Params: "from-engine:RFPMargin,FutMargin", Pairs: 6, BatchPairs: 2,
		Alpha: spsa.DefaultAlpha, Gamma: spsa.DefaultGamma, ARatio: spsa.DefaultARatio, HangTimeout: 30000, Throughput: 1, Remote: true})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := plan.Spec()
	if err != nil {
		t.Fatal(err)
	}
	pgn := filepath.Join(t.TempDir(), "tune.pgn")
	var out, stderr bytes.Buffer
	if err := RunTune(ctx, &out, &stderr, c, spec, true, pgn); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), stderr.String())
	}
	report := out.String()
	for _, want := range []string{"Tune:       t", "(spsa)\nState:      done\n", "Engine:     dev (embedded, Hash=1), played as dev+",
		"Design:     2 parameters, 6 pairs in 3 batches of 2; alpha 0.602, gamma 0.101, A 0 (A ratio 0.1)",
		"3 of 3 updates applied (6 pairs)", "Games:      12, dev+:", "(PGNs stored: 12)",
		"PARAM      START  CURRENT", "RFPMargin  75", "FutMargin  90", "Trajectory (theta at the start, every update, and now):", "up-1"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// One trajectory row per update and the start.
	rows := 0
	for _, l := range strings.Split(report[strings.Index(report, "UPDATES"):], "\n")[1:] {
		if f := strings.Fields(l); len(f) == 3 {
			if _, err := strconv.Atoi(f[0]); err == nil {
				rows++
			}
		}
	}
	if rows != 4 {
		t.Errorf("%d trajectory rows, want 4:\n%s", rows, report)
	}
	// Snapshots are coalesced: a line per update seen, the last one's.
	if !strings.Contains(stderr.String(), "\nupdates 3/3, games 12: ") || !strings.Contains(stderr.String(), "wrote 12 games to "+pgn) {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	t.Logf("report:\n%s", report)
	if b, _ := os.ReadFile(pgn); strings.Count(string(b), "[Event ") != 12 || !strings.Contains(string(b), `[White "dev+"]`) {
		t.Errorf("%d games downloaded, want 12 of dev+ and dev-", strings.Count(string(b), "[Event "))
	}
	id := strings.Fields(report)[1]
	job, err := c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	var exp bytes.Buffer
	if err := ExportTune(ctx, &exp, c, id, spsa.OpenBench); err != nil {
		t.Fatal(err)
	}
	cur := job.GetJob().GetSpsaProgress().GetParams()
	want := "RFPMargin, int, " + strconv.Itoa(int(cur[0].GetCurrent()+0.5)) + ", 20, 300, 5, 0.002\n"
	if !strings.HasPrefix(exp.String(), want) || strings.Count(exp.String(), "\n") != 2 {
		t.Errorf("export:\n%s\nwant it to start %q", exp.String(), want)
	}
	resp, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var list bytes.Buffer
	if err := PrintJobs(&list, resp.GetJobs()); err != nil || !strings.Contains(list.String(), id+"  done   dev     nodes=300  3/3      6/6    12     RFPMargin,FutMargin") {
		t.Errorf("list %v:\n%s", err, list.String())
	}
	// A test is not a tune; an unknown job is named.
	if err := ExportTune(ctx, &exp, c, "t000000000000", spsa.Fishtest); cliexit.Code(err, -1) != 2 || !strings.Contains(err.Error(), "t000000000000") {
		t.Errorf("export of an unknown tune: %v", err)
	}
}
