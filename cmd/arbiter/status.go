package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newStatusCommand() *cobra.Command {
	var f clientFlags
	var jsonOut bool
	var limit uint32
	var block bool
	var style string
	cmd := &cobra.Command{
		Use:   "status [JOB]",
		Short: "Show a coordinator's jobs, or one job in detail",
		Long: `Without JOB, list the jobs: one table per kind (tests with their engines,
time control, games, Elo and LLR; perft jobs with depth, nodes, progress and
FEN; tunes), and the reason of each job that cannot progress. With JOB,
show that job in detail. --json prints the same as JSON (docs/json.md).
--block prints a test's or tune's result block, the text to paste into a
pull request, in OpenBench's layout or (--style fishtest) Fishtest's.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			blockStyle, err := jobreport.ParseBlockStyle(style)
			if err != nil {
				return usageError("--%v", err)
			}
			if block && len(args) == 0 {
				return usageError("--block shows one job's result block: name the job (arbiter status JOB --block)")
			}
			if block && jsonOut {
				return usageError("--block and --json: choose one")
			}
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
				if block {
					_, err := io.WriteString(out, jobreport.Block(resp.GetJob(), blockStyle, ""))
					return err
				}
				return jobreport.PrintJob(out, resp.GetJob())
			}
			var resp *arbiterv1.ListJobsResponse
			err = clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
				resp, err = c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: limit})
				return err
			})
			if err != nil {
				return callError(c, "status", err)
			}
			if jsonOut {
				return jobreport.WriteJobs(out, resp.GetJobs())
			}
			return jobreport.PrintJobs(out, resp.GetJobs())
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON: one job, or {\"jobs\": [...]} (docs/json.md)")
	cmd.Flags().BoolVar(&block, "block", false, "print the job's result block (the text engine authors paste into a pull request)")
	cmd.Flags().StringVar(&style, "style", "openbench", "layout of --block: openbench or fishtest")
	cmd.Flags().Uint32Var(&limit, "limit", 100, "most jobs to list")
	return cmd
}
