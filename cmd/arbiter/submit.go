package main

import (
	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
)

func newSubmitCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "submit",
		Short: "Submit a job to a coordinator",
	}
	// Every kind's `submit KIND` registers itself (clicmd.RegisterSubmit)
	// from its folder under kinds/.
	cmd.AddCommand(clicmd.SubmitCommands()...)
	return cmd
}
