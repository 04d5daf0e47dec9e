package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newCancelCommand() *cobra.Command {
	var f clientFlags
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "cancel JOB",
		Short: "Cancel a running job (stored results are kept)",
		Args:  oneArg("JOB", "a job id; arbiter status lists them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			// Cancelling twice is harmless (the second says the job is
			// already cancelled), so a lost answer may be asked again.
			var resp *arbiterv1.CancelJobResponse
			err = clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
				resp, err = c.Jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: args[0]})
				return err
			})
			if err != nil {
				return callError(c, "cancel", err)
			}
			if jsonOut {
				return jobreport.WriteJob(cmd.OutOrStdout(), resp.GetJob())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s %s\n", resp.GetJob().GetJobId(), jobreport.StateName(resp.GetJob().GetState()))
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the cancelled job as status JOB --json does (docs/json.md)")
	return cmd
}
