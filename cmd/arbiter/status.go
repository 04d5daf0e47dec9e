package main

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newStatusCommand() *cobra.Command {
	var f clientFlags
	var jsonOut bool
	var limit uint32
	var find arbiterv1.ListJobsRequest
	var since, until string
	cmd := &cobra.Command{
		Use:   "status [JOB]",
		Short: "Show a coordinator's jobs, or one job in detail",
		Long: `Without JOB, list the jobs: one table per kind (tests with their engines,
time control, games, Elo and LLR; perft jobs with depth, nodes, progress and
FEN; tunes), and the reason of each job that cannot progress. With JOB,
show that job in detail. --json prints the same as JSON (docs/json.md).

The list can be filtered (each filter only when given): --user, --engine
(either engine's name), --state (running, pending, done, cancelled,
failed), --verdict (passed, failed, none), --kind (test, perft, spsa,
sprt, match, datagen), --tag, --tc (the time control as lists show it,
e.g. 10+0.1), --text (a substring of ids, engines, tags, notes, users),
--since and --until (dates, YYYY-MM-DD, inclusive). When more jobs match
than --limit, the command prints the --cursor of the next page.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				var resp *arbiterv1.GetJobResponse
				err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
					resp, err = c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: args[0]})
					return err
				})
				if err != nil {
					return callError(c, "status", err)
				}
				if jsonOut {
					return jobreport.WriteJob(out, resp.GetJob())
				}
				return jobreport.PrintJob(out, resp.GetJob())
			}
			req := proto.Clone(&find).(*arbiterv1.ListJobsRequest)
			req.Limit = limit
			for _, d := range []struct {
				flag, v string
				t       **timestamppb.Timestamp
				add     int
			}{{"--since", since, &req.CreatedAfter, 0}, {"--until", until, &req.CreatedBefore, 1}} {
				if d.v == "" {
					continue
				}
				day, err := time.Parse(time.DateOnly, d.v)
				if err != nil {
					return usageError("%s %q: want a date as YYYY-MM-DD", d.flag, d.v)
				}
				*d.t = timestamppb.New(day.AddDate(0, 0, d.add))
			}
			var resp *arbiterv1.ListJobsResponse
			err = clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
				resp, err = c.Jobs.ListJobs(ctx, req)
				return err
			})
			if err != nil {
				return callError(c, "status", err)
			}
			if jsonOut {
				return jobreport.WriteJobs(out, resp.GetJobs())
			}
			if err := jobreport.PrintJobs(out, resp.GetJobs()); err != nil {
				return err
			}
			if next := resp.GetNextCursor(); next != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "more jobs match: add --cursor %s for the next page\n", next)
			}
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON: one job, or {\"jobs\": [...]} (docs/json.md)")
	cmd.Flags().Uint32Var(&limit, "limit", 100, "most jobs to list")
	fl := cmd.Flags()
	fl.StringVar(&find.Submitter, "user", "", "list only the jobs this identity submitted")
	fl.StringVar(&find.Engine, "engine", "", "list only tests with an engine of this name")
	fl.StringVar(&find.State, "state", "", "list only jobs in this state: running, pending, done, cancelled, failed")
	fl.StringVar(&find.Verdict, "verdict", "", "list only tests with this verdict: passed, failed, none")
	fl.StringVar(&find.Kind, "kind", "", "list only jobs of this kind: test, perft, spsa, sprt, match, datagen")
	fl.StringVar(&find.Tag, "tag", "", "list only tests with this tag")
	fl.StringVar(&find.TimeControl, "tc", "", "list only tests at this time control (as lists show it, e.g. 10+0.1)")
	fl.StringVar(&find.Text, "text", "", "list only jobs whose id, engines, tags, notes or user contain this text")
	fl.StringVar(&since, "since", "", "list only jobs created on or after this date (YYYY-MM-DD)")
	fl.StringVar(&until, "until", "", "list only jobs created on or before this date (YYYY-MM-DD)")
	fl.StringVar(&find.Cursor, "cursor", "", "list the page after this cursor (printed when more jobs match)")
	return cmd
}
