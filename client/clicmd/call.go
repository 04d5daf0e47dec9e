package clicmd

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

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
)

// Call is one run of a client command: the session's context and
// client, and where its answer goes.
type Call struct {
	Ctx    context.Context
	C      *clusterclient.Client
	Out    io.Writer
	ErrOut io.Writer
	JSON   bool // --json
}

// NewClientCommand makes cmd (its Use, Short, Args, ... filled in) a
// command that calls the coordinator: the client flags, --json when
// jsonHelp is not "", and run in a session. A command that checks its
// input or reads files before it dials calls ClientFlags.call itself.
func NewClientCommand(cmd *cobra.Command, jsonHelp string, run func(r *Call, args []string) error) *cobra.Command {
	var f ClientFlags
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return f.Call(cmd, func(r *Call) error { return run(r, args) })
	}
	f.Add(cmd.Flags())
	if jsonHelp != "" {
		f.AddJSON(cmd.Flags(), jsonHelp)
	}
	return cmd
}

// AddJSON registers --json, described by help (docs/json.md).
func (f *ClientFlags) AddJSON(fl *pflag.FlagSet, help string) {
	fl.BoolVar(&f.json, "json", false, help)
}

// Call opens a session, runs body in it, and closes the session; body's
// answer goes to cmd's standard output.
func (f *ClientFlags) Call(cmd *cobra.Command, body func(r *Call) error) error {
	ctx, c, done, err := f.Session()
	if err != nil {
		return err
	}
	defer done()
	return body(&Call{Ctx: ctx, C: c, Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr(), JSON: f.json})
}

// Print writes the answer: v as one JSON value with --json, else text.
func (r *Call) Print(v any, text func(w io.Writer) error) error {
	if r.JSON {
		return WriteJSON(r.Out, v)
	}
	return text(r.Out)
}

// Failed is a failed call of op as the CLI's error (message and exit
// status).
func (r *Call) Failed(op string, err error) error { return cliexit.Call(r.C, op, err) }

// Retried makes a call, asking again as clusterclient.Interactive allows
// when the answer is lost: for reads and for requests harmless twice.
func Retried[T any](r *Call, call func(ctx context.Context) (T, error)) (T, error) {
	var resp T
	err := clusterclient.Do(r.Ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = call(ctx)
		return err
	})
	return resp, err
}

// WriteJSON writes v as one line of JSON.
func WriteJSON(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }
