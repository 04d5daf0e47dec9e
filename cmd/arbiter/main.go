// Command arbiter is the single binary of the Arbiter cluster: every role
// (perft, coordinator, worker, match runner, UCI engine, clients) is a
// subcommand. Each subcommand lives in its own file and only wires flags to
// the packages that do the work.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a process exit status through cobra's error return.
// Status 2 means bad input (a usage error); 1 means the run found a failure
// (a perft mismatch, a bug in an engine under test).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as bad input: exit status 2.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// failure marks err as a finding (exit status 1) rather than bad input.
func failure(format string, args ...any) error {
	return &exitError{code: 1, err: fmt.Errorf(format, args...)}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "arbiter",
		Short:         "Distributed perft and engine-testing cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	return root
}

// subcommands is filled by each command file's init, so that files for
// different roles never have to edit one shared list.
var subcommands []func() *cobra.Command

func main() {
	err := newRootCommand().Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "arbiter:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	// Errors from cobra itself (unknown flag, missing argument) are usage errors.
	os.Exit(2)
}
