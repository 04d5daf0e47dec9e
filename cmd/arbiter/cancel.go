package main

import (
	"fmt"

	"github.com/spf13/cobra"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func init() { subcommands = append(subcommands, newCancelCommand) }

func newCancelCommand() *cobra.Command {
	var f clientFlags
	cmd := &cobra.Command{
		Use:   "cancel JOB",
		Short: "Cancel a running job (stored results are kept)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, jobs, done, err := f.jobClient()
			if err != nil {
				return err
			}
			defer done()
			resp, err := jobs.CancelJob(ctx, &arbiterv1.CancelJobRequest{JobId: args[0]})
			if err != nil {
				return rpcError("cancel", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s %s\n", resp.GetJob().GetJobId(), stateName(resp.GetJob().GetState()))
			return nil
		},
	}
	f.add(cmd.Flags())
	return cmd
}
