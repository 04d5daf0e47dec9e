package main

// `arbiter modify`, `arbiter resume` and `arbiter reschedule`: changing a
// test while it runs, running a stopped one again, and copying one.

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newModifyCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var priority int32
	var throughput float64
	var games uint64
	var notes string
	var tags []string
	var clearTags bool
	cmd := &cobra.Command{
		Use:   "modify TEST",
		Short: "Change a running test: priority, throughput, game cap, notes, tags",
		Long: `Change a running test while it runs; only the flags given change. The
test's submitter or an admin may. --games sets the game cap (an SPRT: 0 for
none); batches already handed out keep their size, so the new cap is a
multiple of two games per pair of the test's batches and at least what was
handed out. --tag replaces the tags (repeat it for more); --clear-tags
removes them.`,
		Args: clicmd.OneArg("TEST", "a test id; arbiter status lists them"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req := &arbiterv1.ModifyJobRequest{JobId: args[0]}
			fl := cmd.Flags()
			if fl.Changed("priority") {
				req.Priority = &priority
			}
			if fl.Changed("throughput") {
				req.Throughput = &throughput
			}
			if fl.Changed("games") {
				req.Games = &games
			}
			if fl.Changed("notes") {
				req.Notes = &notes
			}
			if fl.Changed("tag") && clearTags {
				return usageError("--tag and --clear-tags: give one of them")
			}
			if fl.Changed("tag") || clearTags {
				req.SetTags, req.Tags = true, tags
			}
			if req.Priority == nil && req.Throughput == nil && req.Games == nil && req.Notes == nil && !req.SetTags {
				return usageError("nothing to change: give --priority, --throughput, --games, --notes, --tag or --clear-tags")
			}
			ctx, c, done, err := f.Session()
			if err != nil {
				return err
			}
			defer done()
			// Setting the same values twice is harmless, so a lost answer
			// may be asked again.
			var resp *arbiterv1.ModifyJobResponse
			err = clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
				resp, err = c.Jobs.ModifyJob(ctx, req)
				return err
			})
			if err != nil {
				return cliexit.Call(c, "modify", err)
			}
			printChanged(cmd.OutOrStdout(), resp.GetJob())
			return nil
		},
	}
	f.Add(cmd.Flags())
	fl := cmd.Flags()
	fl.Int32Var(&priority, "priority", 0, "scheduling priority (higher first)")
	fl.Float64Var(&throughput, "throughput", 1, "share of the workers among tests of equal priority")
	fl.Uint64Var(&games, "games", 0, "the game cap (even; an SPRT: 0 for none)")
	fl.StringVar(&notes, "notes", "", "the test's notes (replaces them)")
	fl.StringArrayVar(&tags, "tag", nil, "a tag (repeat for more); replaces the test's tags")
	fl.BoolVar(&clearTags, "clear-tags", false, "remove the test's tags")
	return cmd
}

// printChanged prints a test's scheduling after a change.
func printChanged(out io.Writer, j *arbiterv1.Job) {
	s := j.GetMatch()
	fmt.Fprintf(out, "test %s %s: priority %d, throughput %g, games %d", j.GetJobId(), jobreport.StateName(j.GetState()),
		s.GetPriority(), s.GetThroughput(), s.GetGames())
	if len(s.GetTags()) > 0 {
		fmt.Fprintf(out, ", tags %v", s.GetTags())
	}
	fmt.Fprintln(out)
}

func newResumeCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "resume TEST",
		Short: "Run a stopped (cancelled) test again from where it stood",
		Args:  clicmd.OneArg("TEST", "a test id; arbiter status lists them"),
	}, "", func(r *clicmd.Call, args []string) error {
		// Not retried: a second resume of a test resumed meanwhile
		// would say it is not stopped, which reads as a failure.
		resp, err := r.C.Jobs.ResumeJob(r.Ctx, &arbiterv1.ResumeJobRequest{JobId: args[0]})
		if err != nil {
			return r.Failed("resume", err)
		}
		printChanged(r.Out, resp.GetJob())
		return nil
	})
}

func newRescheduleCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "reschedule TEST",
		Short: "Submit a copy of a test that links to the original",
		Long: `Submit a copy of a test: the same engines, book, time control, SPRT,
tags and notes, as a new test of yours. Both tests' pages and status show
the link.`,
		Args: clicmd.OneArg("TEST", "a test id; arbiter status lists them"),
	}, "", func(r *clicmd.Call, args []string) error {
		// Not retried: a lost answer asked again would make two copies.
		resp, err := r.C.Jobs.RescheduleJob(r.Ctx, &arbiterv1.RescheduleJobRequest{JobId: args[0]})
		if err != nil {
			return r.Failed("reschedule", err)
		}
		fmt.Fprintf(r.Out, "test %s submitted, a copy of %s\n", resp.GetJob().GetJobId(), args[0])
		return nil
	})
}
