package clusterclient

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// errStreamEnded stands for a watch stream the coordinator closed while
// the job was still running (it was stopping): retryable like Unavailable.
var errStreamEnded = status.Error(codes.Unavailable, "the coordinator closed the watch before the job ended")

// WatchJob follows job id until it leaves the running state and returns
// its last snapshot. Every snapshot goes to onUpdate (may be nil). When
// the stream breaks with a retryable error (the coordinator restarted,
// the connection was lost) it reconnects under p and resumes: each new
// stream starts with a full snapshot, so nothing is missed but repeats. A
// received snapshot restores p's budget. Errors are returned as they came
// (see Client.Err); an interruption returns ctx's error.
func (c *Client) WatchJob(ctx context.Context, id string, p Policy, onUpdate func(*arbiterv1.Job)) (*arbiterv1.Job, error) {
	b := NewBackoff(p)
	for {
		final, err := c.watchOnce(ctx, id, b, onUpdate)
		if final != nil {
			return final, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !Retryable(err) || !b.Wait(ctx, err) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
}

// watchOnce runs one stream until the job ends (final set) or the stream
// fails.
func (c *Client) watchOnce(ctx context.Context, id string, b *Backoff, onUpdate func(*arbiterv1.Job)) (*arbiterv1.Job, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.Jobs.WatchJob(sctx, &arbiterv1.WatchJobRequest{JobId: id})
	if err != nil {
		return nil, err
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, errStreamEnded
		}
		if err != nil {
			return nil, err
		}
		b.Reset()
		j := resp.GetJob()
		if j == nil {
			continue
		}
		if onUpdate != nil {
			onUpdate(j)
		}
		// A pending job (waiting for an approver) is not over either.
		if j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING && j.GetState() != arbiterv1.JobState_JOB_STATE_PENDING {
			return j, nil
		}
	}
}
