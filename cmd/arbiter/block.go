package main

// `arbiter block`: an admin blocks or unblocks a worker or an identity.

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newBlockCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var workerID, ident, reason string
	var unblock, list bool
	cmd := &cobra.Command{
		Use:   "block",
		Short: "Block or unblock a worker or an identity (admin), or list what is blocked",
		Long: `Block a worker (--worker ID, as the workers page and status show it) or
every worker of an identity (--identity NAME): a blocked worker gets no more
work and loses the leases it holds until it is unblocked (--unblock). Blocks
are stored and survive a restart. --list prints what is blocked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list == (workerID != "" || ident != "") {
				return usageError("give --list, or --worker or --identity")
			}
			if workerID != "" && ident != "" {
				return usageError("--worker and --identity: give one of them")
			}
			ctx, c, done, err := f.Session()
			if err != nil {
				return err
			}
			defer done()
			if list {
				var resp *arbiterv1.ListBlockedResponse
				err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
					resp, err = c.Admin.ListBlocked(ctx, &arbiterv1.ListBlockedRequest{})
					return err
				})
				if err != nil {
					return cliexit.Call(c, "block", err)
				}
				printBlocks(cmd.OutOrStdout(), resp.GetBlocked())
				return nil
			}
			var resp *arbiterv1.BlockWorkerResponse
			// Blocking twice is harmless; unblocking twice says the second
			// time that nothing is blocked, so only blocks are retried.
			policy := clusterclient.Interactive
			call := func(ctx context.Context) (err error) {
				resp, err = c.Admin.BlockWorker(ctx, &arbiterv1.BlockWorkerRequest{WorkerId: workerID, Identity: ident, Blocked: !unblock, Reason: reason})
				return err
			}
			if unblock {
				err = call(ctx)
			} else {
				err = clusterclient.Do(ctx, policy, call)
			}
			if err != nil {
				return cliexit.Call(c, "block", err)
			}
			printBlocks(cmd.OutOrStdout(), resp.GetBlocked())
			return nil
		},
	}
	f.Add(cmd.Flags())
	fl := cmd.Flags()
	fl.StringVar(&workerID, "worker", "", "the worker id to block")
	fl.StringVar(&ident, "identity", "", "the identity whose workers to block")
	fl.StringVar(&reason, "reason", "", "why (shown on the workers page)")
	fl.BoolVar(&unblock, "unblock", false, "unblock instead")
	fl.BoolVar(&list, "list", false, "list what is blocked")
	return cmd
}

func printBlocks(out io.Writer, bs []*arbiterv1.Block) {
	if len(bs) == 0 {
		fmt.Fprintln(out, "nothing is blocked")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tIDENTITY\tBY\tAT\tREASON")
	for _, b := range bs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", orDash(b.GetWorkerId()), orDash(b.GetIdentity()), b.GetBy(),
			b.GetAt().AsTime().UTC().Format(time.DateTime), b.GetReason())
	}
	tw.Flush()
}
