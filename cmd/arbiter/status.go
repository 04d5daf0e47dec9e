package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newStatusCommand() *cobra.Command {
	var limit uint32
	var block bool
	var style string
	var blockStyle jobreport.BlockStyle
	cmd := newClientCommand(&cobra.Command{
		Use:   "status [JOB]",
		Short: "Show a coordinator's jobs, or one job in detail",
		Long: `Without JOB, list the jobs: one table per kind (tests with their engines,
time control, games, Elo and LLR; perft jobs with depth, nodes, progress and
FEN; tunes), and the reason of each job that cannot progress. With JOB,
show that job in detail. --json prints the same as JSON (docs/json.md).
--block prints a test's or tune's result block, the text to paste into a
pull request, in OpenBench's layout or (--style fishtest) Fishtest's.`,
		Args: cobra.MaximumNArgs(1),
		// The flags are checked before the coordinator is called.
		PreRunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if blockStyle, err = jobreport.ParseBlockStyle(style); err != nil {
				return usageError("--%v", err)
			}
			if block && len(args) == 0 {
				return usageError("--block shows one job's result block: name the job (arbiter status JOB --block)")
			}
			if json, _ := cmd.Flags().GetBool("json"); block && json {
				return usageError("--block and --json: choose one")
			}
			return nil
		},
	}, "print JSON: one job, or {\"jobs\": [...]} (docs/json.md)", func(r *clientCall, args []string) error {
		if len(args) == 1 {
			resp, err := retried(r, func(ctx context.Context) (*arbiterv1.GetJobResponse, error) {
				return r.c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: args[0]})
			})
			if err != nil {
				return r.failed("status", err)
			}
			switch {
			case r.json:
				return jobreport.WriteJob(r.out, resp.GetJob())
			case block:
				_, err := io.WriteString(r.out, jobreport.Block(resp.GetJob(), blockStyle, ""))
				return err
			}
			return jobreport.PrintJob(r.out, resp.GetJob())
		}
		resp, err := retried(r, func(ctx context.Context) (*arbiterv1.ListJobsResponse, error) {
			return r.c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: limit})
		})
		if err != nil {
			return r.failed("status", err)
		}
		if r.json {
			return jobreport.WriteJobs(r.out, resp.GetJobs())
		}
		return jobreport.PrintJobs(r.out, resp.GetJobs())
	})
	cmd.Flags().Uint32Var(&limit, "limit", 100, "most jobs to list")
	cmd.Flags().BoolVar(&block, "block", false, "print the job's result block (the text engine authors paste into a pull request)")
	cmd.Flags().StringVar(&style, "style", "openbench", "layout of --block: openbench or fishtest")
	return cmd
}
