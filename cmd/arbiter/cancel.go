package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newCancelCommand() *cobra.Command {
	return newClientCommand(&cobra.Command{
		Use:   "cancel JOB",
		Short: "Cancel a running job (stored results are kept)",
		Args:  oneArg("JOB", "a job id; arbiter status lists them"),
	}, "print the cancelled job as status JOB --json does (docs/json.md)", func(r *clientCall, args []string) error {
		// Cancelling twice is harmless (the second says the job is
		// already cancelled), so a lost answer may be asked again.
		resp, err := retried(r, func(ctx context.Context) (*arbiterv1.CancelJobResponse, error) {
			return r.c.Jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: args[0]})
		})
		if err != nil {
			return r.failed("cancel", err)
		}
		if r.json {
			return jobreport.WriteJob(r.out, resp.GetJob())
		}
		fmt.Fprintf(r.out, "job %s %s\n", resp.GetJob().GetJobId(), jobreport.StateName(resp.GetJob().GetState()))
		return nil
	})
}
