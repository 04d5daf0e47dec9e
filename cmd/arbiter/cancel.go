package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newCancelCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "cancel JOB",
		Short: "Cancel a running job (stored results are kept)",
		Args:  clicmd.OneArg("JOB", "a job id; arbiter status lists them"),
	}, "print the cancelled job as status JOB --json does (docs/json.md)", func(r *clicmd.Call, args []string) error {
		// Cancelling twice is harmless (the second says the job is
		// already cancelled), so a lost answer may be asked again.
		resp, err := clicmd.Retried(r, func(ctx context.Context) (*arbiterv1.CancelJobResponse, error) {
			return r.C.Jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: args[0]})
		})
		if err != nil {
			return r.Failed("cancel", err)
		}
		if r.JSON {
			return jobreport.WriteJob(r.Out, resp.GetJob())
		}
		fmt.Fprintf(r.Out, "job %s %s\n", resp.GetJob().GetJobId(), jobreport.StateName(resp.GetJob().GetState()))
		return nil
	})
}
