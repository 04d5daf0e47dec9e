package verify

// arbiter verify --coordinator ADDR: the descent runs here, each engine
// query is a unit for a worker that has the engine (see
// client/verifyclient and this kind's workload), and positions are
// verified --parallel at a time (verifyrun).

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/verifyclient"
	"github.com/arbiter-chess/arbiter/kinds/verify/verifyrun"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	vf "github.com/arbiter-chess/arbiter/verify"
)

func runVerifyCluster(cmd *cobra.Command, f *verifyFlags, name string, spec vf.EngineSpec, targets []vf.Target) error {
	if err := clicmd.CheckRange("parallel", f.parallel, 1, 1024); err != nil {
		return err
	}
	ctx, c, closeClient, err := f.client.Session()
	if err != nil {
		return err
	}
	defer closeClient()
	// Ask once before the descent, so that an absent coordinator or a
	// refused credential is said at once instead of retried for ever by
	// each query.
	if err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) error {
		_, err := c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: 1})
		return err
	}); err != nil {
		return cliexit.Call(c, "verify", err)
	}
	stderr := cmd.ErrOrStderr()
	eng := verifyclient.New(verifyclient.Config{Client: c, Name: name, Spec: spec, Timeout: f.timeout,
		Notice: func(msg string) { fmt.Fprintf(stderr, "arbiter verify: %s\n", msg) }})
	defer eng.Close()

	out := cmd.OutOrStdout()
	opt := vf.Options{MaxFindings: f.maxFindings, MaxProbes: f.maxProbes, Threads: f.threads}
	if opt.Threads == 0 && f.parallel > 1 {
		opt.Threads = 1 // our own perft: one core per position in flight
	}
	// A refusal (bad request, credential) is the same for every query:
	// it stops the others at once.
	res := verifyrun.Run(ctx, verifyrun.Config{Engine: eng, Targets: targets, Depth: f.positions.Depth, Options: opt,
		Parallel: f.parallel, Out: out, JSON: f.jsonOut, Refused: eng.Refused})
	reported := reportSession(stderr, eng, res)
	units, byWorker := eng.Stats()
	if f.jsonOut {
		cluster := map[string]any{"coordinator": c.Addr(), "session": eng.Session(), "units": units, "units_by_worker": byWorker,
			"reported": reported}
		if err := res.Print(out, true, cluster); err != nil {
			return err
		}
	} else {
		res.Print(out, false, nil)
		ws := make([]string, 0, len(byWorker))
		for w, n := range byWorker {
			ws = append(ws, fmt.Sprintf("%s %d", w, n))
		}
		sort.Strings(ws)
		fmt.Fprintf(out, "cluster %s: %d engine queries as units (by worker: %s)\n", c.Addr(), units, strings.Join(ws, ", "))
	}
	if err := eng.Refused(); err != nil {
		return &cliexit.Error{Code: clusterclient.ExitCode(err), Err: err}
	}
	return res.Err(ctx)
}

// reportSession sends what the session found to the coordinator, which
// shows it on /verify/SESSION (docs/web.md), and says so on stderr. It
// reports whether the coordinator kept it. A coordinator that cannot keep
// it (an older one, a store error) changes nothing else: the findings are
// printed here anyway. An interrupted run reports the positions that
// finished, with a context of its own.
func reportSession(stderr io.Writer, eng *verifyclient.Engine, res *verifyrun.Result) bool {
	if eng.Refused() != nil || len(res.Reports) == 0 {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stored, err := eng.Report(ctx, res.Reports, res.Summary.Depth, time.Duration(res.Summary.Seconds*float64(time.Second)))
	if err != nil {
		fmt.Fprintf(stderr, "arbiter verify: session %s not reported to the coordinator: %v\n", eng.Session(), err)
		return false
	}
	fmt.Fprintf(stderr, "arbiter verify: session %s reported to the coordinator (%d positions with findings kept; page /verify/%s)\n",
		eng.Session(), stored, eng.Session())
	return true
}
