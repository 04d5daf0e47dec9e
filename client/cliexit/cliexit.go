// Package cliexit carries the arbiter command's exit status through the
// errors of the packages that do a command's work (local/localcluster,
// kinds/verify/verifyrun, ...), so that they can say "bad input" or "a
// failure was found" without knowing about cobra or os.Exit.
//
// The statuses are those of docs/cluster.md: 0 ok, 1 a failure found (a
// perft mismatch, a bug in an engine, a test that did not finish), 2 bad
// input, 3 the coordinator unreachable or refusing the credential.
package cliexit

import (
	"errors"
	"fmt"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
)

// Error is an error with the exit status it ends the command with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is the status the command exits with.
func (e *Error) ExitCode() int { return e.Code }

// Usage marks a refused input (exit status 2); the message names the input.
func Usage(format string, args ...any) error {
	return &Error{Code: clusterclient.ExitBadInput, Err: fmt.Errorf(format, args...)}
}

// Failure marks a finding rather than bad input (exit status 1).
func Failure(format string, args ...any) error {
	return &Error{Code: clusterclient.ExitFailure, Err: fmt.Errorf(format, args...)}
}

// Call is a failed call op to the coordinator of c: the message names the
// coordinator and the status says whether it was unreachable or refused
// (3), refused the request (2) or failed otherwise (1).
func Call(c *clusterclient.Client, op string, err error) error {
	if err == nil {
		return nil
	}
	e := c.Err(op, err)
	return &Error{Code: clusterclient.ExitCode(e), Err: e}
}

// Code is the exit status err carries (anything in its chain with an
// ExitCode method), or otherwise when it carries none; 0 for nil.
func Code(err error, otherwise int) int {
	if err == nil {
		return clusterclient.ExitOK
	}
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return otherwise
}
