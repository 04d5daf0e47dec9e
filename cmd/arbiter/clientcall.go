package main

// The skeleton every command that calls a coordinator shares: a session
// dialled with the client flags, the calls (retried where asking again is
// harmless), a failed call as the CLI's error, and the answer printed as
// JSON with --json or as text.

import (
	"context"
	"encoding/json"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
)

// clientCall is one run of a client command: the session's context and
// client, and where its answer goes.
type clientCall struct {
	ctx    context.Context
	c      *clusterclient.Client
	out    io.Writer
	errOut io.Writer
	json   bool // --json
}

// newClientCommand makes cmd (its Use, Short, Args, ... filled in) a
// command that calls the coordinator: the client flags, --json when
// jsonHelp is not "", and run in a session. A command that checks its
// input or reads files before it dials calls clientFlags.call itself.
func newClientCommand(cmd *cobra.Command, jsonHelp string, run func(r *clientCall, args []string) error) *cobra.Command {
	var f clientFlags
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return f.call(cmd, func(r *clientCall) error { return run(r, args) })
	}
	f.add(cmd.Flags())
	if jsonHelp != "" {
		f.addJSON(cmd.Flags(), jsonHelp)
	}
	return cmd
}

// addJSON registers --json, described by help (docs/json.md).
func (f *clientFlags) addJSON(fl *pflag.FlagSet, help string) {
	fl.BoolVar(&f.json, "json", false, help)
}

// call opens a session, runs body in it, and closes the session; body's
// answer goes to cmd's standard output.
func (f *clientFlags) call(cmd *cobra.Command, body func(r *clientCall) error) error {
	ctx, c, done, err := f.session()
	if err != nil {
		return err
	}
	defer done()
	return body(&clientCall{ctx: ctx, c: c, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), json: f.json})
}

// print writes the answer: v as one JSON value with --json, else text.
func (r *clientCall) print(v any, text func(w io.Writer) error) error {
	if r.json {
		return writeJSON(r.out, v)
	}
	return text(r.out)
}

// failed is a failed call of op as the CLI's error (message and exit
// status).
func (r *clientCall) failed(op string, err error) error { return callError(r.c, op, err) }

// retried makes a call, asking again as clusterclient.Interactive allows
// when the answer is lost: for reads and for requests harmless twice.
func retried[T any](r *clientCall, call func(ctx context.Context) (T, error)) (T, error) {
	var resp T
	err := clusterclient.Do(r.ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = call(ctx)
		return err
	})
	return resp, err
}

func writeJSON(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }
