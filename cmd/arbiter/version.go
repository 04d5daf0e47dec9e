package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/buildinfo"
)

func newVersionCommand() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the build: module version, VCS revision, commit time, modified tree",
		Long: `Print the build of this binary as the Go toolchain stamped it: the module
version, the VCS revision and its time, whether the work tree had
uncommitted changes, and the Go version. make build stamps the revision;
a build with -buildvcs=false says it is unknown. arbiter --version prints
the same; workers report the short form to the coordinator.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := buildinfo.Read()
			if jsonOut {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(in)
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), in.String())
			return err
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object (docs/json.md)")
	return cmd
}
