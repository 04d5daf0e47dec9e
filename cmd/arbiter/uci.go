package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/engine/uci"
)

func newUCICommand() *cobra.Command {
	return &cobra.Command{
		Use:   "uci",
		Short: "Run the embedded engine as a UCI engine on stdin/stdout",
		Long: `Run Arbiter's engine as a UCI engine: point a GUI, cutechess-cli or fastchess
at "arbiter uci". Every evaluation weight and search constant is a UCI spin
option; "go perft N" prints divide, "bench" prints the node signature.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return uci.Main(os.Stdin, os.Stdout)
		},
	}
}
