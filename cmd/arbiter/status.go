package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	"github.com/arbiter-chess/arbiter/internal/jobreport"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

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
					jobreport.PrintTest(out, resp.GetJob())
					return nil
				}
				jobreport.PrintPerftDetail(out, resp.GetJob())
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
			return jobreport.PrintJobs(out, resp.GetJobs())
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print JSON")
	cmd.Flags().Uint32Var(&limit, "limit", 100, "most jobs to list")
	return cmd
}
