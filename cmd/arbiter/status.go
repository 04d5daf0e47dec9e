package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/jobfind"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newStatusCommand() *cobra.Command {
	var limit uint32
	var block, wait bool
	var style string
	var blockStyle jobreport.BlockStyle
	var find arbiterv1.ListJobsRequest
	var since, until string
	cmd := clicmd.NewClientCommand(&cobra.Command{
		Use:   "status [JOB]",
		Short: "Show a coordinator's jobs, or one job in detail",
		Long: `Without JOB, list the jobs: one table per kind (tests with their engines,
time control, games, Elo and LLR; perft jobs with depth, nodes, progress and
FEN; tunes), and the reason of each job that cannot progress. With JOB,
show that job in detail. --json prints the same as JSON (docs/json.md).
--block prints a job's result block, the text to paste into a pull
request: a test's or tune's in OpenBench's layout or (--style fishtest)
Fishtest's, another kind's as it registers it (an EPD job's table).

The list can be filtered (each filter only when given): --user, --engine
(either engine's name), --state (running, pending, approval, done,
cancelled, failed), --verdict (passed, failed, none), --kind (a kind of
job, as --kind's help lists them), --tag, --tc (the time control as lists show it,
e.g. 10+0.1), --text (a substring of ids, engines, tags, notes, users),
--since and --until (dates, YYYY-MM-DD, inclusive). When more jobs match
than --limit, the command prints the --cursor of the next page.`,
		Args: cobra.MaximumNArgs(1),
		// The flags are checked before the coordinator is called.
		PreRunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if blockStyle, err = jobreport.ParseBlockStyle(style); err != nil {
				return usageError("--%v", err)
			}
			if wait && (len(args) == 0 || block) {
				return usageError("--wait waits for one job: name the job (arbiter status JOB --wait), without --block")
			}
			if block && len(args) == 0 {
				return usageError("--block shows one job's result block: name the job (arbiter status JOB --block)")
			}
			if json, _ := cmd.Flags().GetBool("json"); block && json {
				return usageError("--block and --json: choose one")
			}
			for _, d := range []struct {
				flag, v string
				t       **timestamppb.Timestamp
				add     int
			}{{"--since", since, &find.CreatedAfter, 0}, {"--until", until, &find.CreatedBefore, 1}} {
				if d.v == "" {
					continue
				}
				day, err := time.Parse(time.DateOnly, d.v)
				if err != nil {
					return usageError("%s %q: want a date as YYYY-MM-DD", d.flag, d.v)
				}
				*d.t = timestamppb.New(day.AddDate(0, 0, d.add))
			}
			return nil
		},
	}, "print JSON: one job, or {\"jobs\": [...]} (docs/json.md)", func(r *clicmd.Call, args []string) error {
		if len(args) == 1 {
			resp, err := clicmd.Retried(r, func(ctx context.Context) (*arbiterv1.GetJobResponse, error) {
				return r.C.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: args[0]})
			})
			if err != nil {
				return r.Failed("status", err)
			}
			switch {
			case wait:
				return waitStatus(r, resp.GetJob())
			case r.JSON:
				return jobreport.WriteJob(r.Out, resp.GetJob())
			case block:
				_, err := io.WriteString(r.Out, jobreport.Block(resp.GetJob(), blockStyle, ""))
				return err
			}
			return jobreport.PrintJob(r.Out, resp.GetJob())
		}
		req := proto.Clone(&find).(*arbiterv1.ListJobsRequest)
		req.Limit = limit
		resp, err := clicmd.Retried(r, func(ctx context.Context) (*arbiterv1.ListJobsResponse, error) {
			return r.C.Jobs.ListJobs(ctx, req)
		})
		if err != nil {
			return r.Failed("status", err)
		}
		if r.JSON {
			return jobreport.WriteJobs(r.Out, resp.GetJobs())
		}
		if err := jobreport.PrintJobs(r.Out, resp.GetJobs()); err != nil {
			return err
		}
		if next := resp.GetNextCursor(); next != "" {
			fmt.Fprintf(r.ErrOut, "more jobs match: add --cursor %s for the next page\n", next)
		}
		return nil
	})
	fl := cmd.Flags()
	fl.Uint32Var(&limit, "limit", 100, "most jobs to list")
	fl.BoolVar(&wait, "wait", false, "with a JOB of kind "+strings.Join(jobreport.WaitKinds(), ", ")+": wait until it ends (through coordinator restarts), then print it as its submit --wait does")
	fl.BoolVar(&block, "block", false, "print the job's result block (the text engine authors paste into a pull request)")
	fl.StringVar(&style, "style", "openbench", "layout of --block: openbench or fishtest")
	fl.StringVar(&find.Submitter, "user", "", "list only the jobs this identity submitted")
	fl.StringVar(&find.Engine, "engine", "", "list only tests with an engine of this name")
	fl.StringVar(&find.State, "state", "", "list only jobs in this state: running, pending, approval (waiting for an approver), done, cancelled, failed")
	fl.StringVar(&find.Verdict, "verdict", "", "list only tests with this verdict: passed, failed, none")
	fl.StringVar(&find.Kind, "kind", "", "list only jobs of this kind: "+strings.Join(jobfind.Kinds(), ", "))
	fl.StringVar(&find.Tag, "tag", "", "list only tests with this tag")
	fl.StringVar(&find.TimeControl, "tc", "", "list only tests at this time control (as lists show it, e.g. 10+0.1)")
	fl.StringVar(&find.Text, "text", "", "list only jobs whose id, engines, tags, notes or user contain this text")
	fl.StringVar(&since, "since", "", "list only jobs created on or after this date (YYYY-MM-DD)")
	fl.StringVar(&until, "until", "", "list only jobs created on or before this date (YYYY-MM-DD)")
	fl.StringVar(&find.Cursor, "cursor", "", "list the page after this cursor (printed when more jobs match)")
	return cmd
}

// waitStatus serves status JOB --wait: the job is watched to its end and
// printed by its family's Wait (jobreport.Report.Wait, registered by its
// kind), as its submit --wait prints it; a job of a kind without one is
// refused, naming the kinds that have one.
func waitStatus(r *clicmd.Call, j *arbiterv1.Job) error {
	wait, err := jobreport.WaiterOf(j)
	if err != nil {
		return usageError("--wait: %v", err)
	}
	_, err = wait(r.Ctx, r.C, j, jobreport.WaitOptions{Out: r.Out, Progress: r.ErrOut, Bar: !r.JSON, JSON: r.JSON})
	return err
}
