package clicmd

import (
	"context"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/arbiter-chess/arbiter/client/cliexit"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// SubmitJob submits a job of a kind that plugs in (JobService.SubmitJob,
// its spec carried as Any), retrying as an interactive call does; an
// error is the command's, ready to return.
func SubmitJob(ctx context.Context, c *clusterclient.Client, kind string, spec proto.Message) (*arbiterv1.Job, error) {
	packed, err := anypb.New(spec)
	if err != nil {
		return nil, err
	}
	var resp *arbiterv1.SubmitJobResponse
	err = clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = c.Jobs.SubmitJob(ctx, &arbiterv1.SubmitJobRequest{Kind: kind, Spec: packed})
		return err
	})
	if err != nil {
		return nil, cliexit.Call(c, "submit", err)
	}
	return resp.GetJob(), nil
}
