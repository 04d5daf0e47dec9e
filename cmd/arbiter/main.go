// Command arbiter is the single binary of the Arbiter cluster: every role
// (perft, coordinator, worker, match runner, UCI engine, clients) is a
// subcommand. Each subcommand's file parses its flags into the spec of the
// package that does the work and calls it; main lists the subcommands.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/buildinfo"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/enginehost/sandbox"
	_ "github.com/arbiter-chess/arbiter/kinds/install"
)

// usageError marks err as bad input: exit status 2.
func usageError(format string, args ...any) error { return cliexit.Usage(format, args...) }

// failure marks err as a finding (exit status 1) rather than bad input.
func failure(format string, args ...any) error { return cliexit.Failure(format, args...) }

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "arbiter",
		Short:         "Distributed perft and engine-testing cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Read().Short(),
	}
	// --version prints what `arbiter version` prints.
	root.SetVersionTemplate(buildinfo.Read().String())
	// -v meant the version here and --verbose in bench: --version only,
	// -v still accepted with a note.
	root.Flags().BoolP("version", "v", false, "print the build (as arbiter version)")
	root.Flags().MarkShorthandDeprecated("version", "use --version")
	root.AddCommand(
		// On this machine.
		newMatchCommand(), newSPRTCommand(), newUCICommand(), newBenchCommand(),
		newTBCommand(), // Syzygy tablebases
		// Serving.
		newUpCommand(), newCoordinatorCommand(), newWorkerCommand(), newCertsCommand(), newStoreCommand(), newUserCommand(), newAuditCommand(),
		// Clients of a coordinator.
		newSubmitCommand(), newStatusCommand(), newCancelCommand(), newModifyCommand(), newResumeCommand(), newRescheduleCommand(), newBlockCommand(), newTokenCommand(), newBackupCommand(),
		newVersionCommand(),
		newEngineCommand(), newNetCommand(), newHookCommand(),
		// Training the embedded engine's net on this machine.
		newTrainCommand(),
	)
	// The commands of the kinds under kinds/ (kinds/install): each kind
	// registers its own (clicmd.RegisterCommand), as it does its submit
	// subcommand.
	root.AddCommand(clicmd.Commands()...)
	addSuggestions(root)
	return root
}

func main() {
	// This binary is also the sandbox that runs uploaded engines under
	// limits (a worker re-executes itself as the wrapper).
	sandbox.RunIfWrapper()
	var err error
	if args, dialect, ok := fastchessArgs(os.Args); ok {
		err = runFastchess(args, dialect)
	} else {
		err = newRootCommand().Execute()
	}
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "arbiter:", err)
	// Errors from cobra itself (unknown flag, missing argument) carry no
	// status: they are usage errors.
	os.Exit(cliexit.Code(err, 2))
}
