package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arbiter-chess/arbiter/internal/clusterclient"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func init() { subcommands = append(subcommands, newStatusCommand) }

func newStatusCommand() *cobra.Command {
	var f clientFlags
	var jsonOut bool
	var limit uint32
	cmd := &cobra.Command{
		Use:   "status [JOB]",
		Short: "Show a coordinator's jobs, or one job in detail",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				var resp *arbiterv1.GetJobResponse
				err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
					resp, err = c.Jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: args[0]})
					return err
				})
				if err != nil {
					return callError(c, "status", err)
				}
				if jsonOut {
					b, _ := protojson.MarshalOptions{Multiline: true}.Marshal(resp.GetJob())
					fmt.Fprintln(out, string(b))
					return nil
				}
				if resp.GetJob().GetMatch() != nil {
					printTestDetail(out, resp.GetJob())
					return nil
				}
				printJobDetail(out, resp.GetJob())
				return nil
			}
			var resp *arbiterv1.ListJobsResponse
			err = clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
				resp, err = c.Jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{Limit: limit})
				return err
			})
			if err != nil {
				return callError(c, "status", err)
			}
			if jsonOut {
				var list []json.RawMessage
				for _, j := range resp.GetJobs() {
					b, _ := protojson.Marshal(j)
					list = append(list, b)
				}
				return json.NewEncoder(out).Encode(list)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "JOB\tSTATE\tDEPTH\tUNITS\tNODES\tFEN")
			for _, j := range resp.GetJobs() {
				p := j.GetProgress()
				if mp := j.GetMatchProgress(); mp != nil {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%d games\t%s vs %s\n", j.GetJobId(), stateName(j.GetState()), j.GetKind(),
						p.GetUnitsDone(), p.GetUnitsTotal(), mp.GetGames(), j.GetMatch().GetEngineA().GetName(), j.GetMatch().GetEngineB().GetName())
					continue
				}
				nodes := j.GetNodes()
				if nodes == "" {
					nodes = p.GetNodesDone() + "+"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%s\t%s\n", j.GetJobId(), stateName(j.GetState()), j.GetPerft().GetDepth(),
					p.GetUnitsDone(), p.GetUnitsTotal(), nodes, j.GetPerft().GetFen())
			}
			return tw.Flush()
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	cmd.Flags().Uint32Var(&limit, "limit", 100, "most jobs to list")
	return cmd
}

func printJobDetail(out interface{ Write([]byte) (int, error) }, j *arbiterv1.Job) {
	p := j.GetProgress()
	fmt.Fprintf(out, "Job:        %s\nState:      %s\n", j.GetJobId(), stateName(j.GetState()))
	fmt.Fprintf(out, "FEN:        %s\nDepth:      %d (split at ply %d, verify %.2f)\n", j.GetPerft().GetFen(),
		j.GetPerft().GetDepth(), j.GetPerft().GetSplitPly(), j.GetPerft().GetVerifyFraction())
	fmt.Fprintf(out, "Units:      %d/%d done, %d verified; %d unique positions\n", p.GetUnitsDone(), p.GetUnitsTotal(),
		p.GetUnitsVerified(), p.GetPositions())
	fmt.Fprintf(out, "Mismatches: %d (%d settled)\nWorkers:    %d active\n", p.GetMismatches(), p.GetMismatchesSettled(), p.GetActiveWorkers())
	if j.GetError() != "" {
		fmt.Fprintf(out, "Error:      %s\n", j.GetError())
	}
	if j.GetNodes() != "" {
		for _, d := range j.GetDivide() {
			fmt.Fprintf(out, "  %s: %s\n", d.GetMove(), d.GetNodes())
		}
		fmt.Fprintf(out, "Nodes:      %s\n", j.GetNodes())
	} else {
		fmt.Fprintf(out, "Nodes done: %s\n", p.GetNodesDone())
	}
}
