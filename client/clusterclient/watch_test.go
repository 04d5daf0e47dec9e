package clusterclient

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// watchJobs is a JobService whose WatchJob sends a running snapshot for
// each of units (units done), then either the finished job or nothing more
// (until the server stops).
type watchJobs struct {
	arbiterv1.UnimplementedJobServiceServer
	units  []uint64
	finish bool
	sent   atomic.Int32
}

func (w *watchJobs) WatchJob(req *arbiterv1.WatchJobRequest, stream arbiterv1.JobService_WatchJobServer) error {
	if req.GetJobId() != "p1" {
		return status.Error(codes.NotFound, "unknown job")
	}
	for _, u := range w.units {
		if err := stream.Send(&arbiterv1.WatchJobResponse{Job: &arbiterv1.Job{JobId: "p1", State: arbiterv1.JobState_JOB_STATE_RUNNING,
			Progress: &arbiterv1.JobProgress{UnitsDone: u, UnitsTotal: 10}}}); err != nil {
			return err
		}
		w.sent.Add(1)
	}
	if w.finish {
		return stream.Send(&arbiterv1.WatchJobResponse{Job: &arbiterv1.Job{JobId: "p1", State: arbiterv1.JobState_JOB_STATE_DONE,
			Progress: &arbiterv1.JobProgress{UnitsDone: 10, UnitsTotal: 10}}})
	}
	<-stream.Context().Done()
	return stream.Context().Err()
}

// TestWatchAcrossRestart: the coordinator stops mid-watch and comes back
// on the same port; the watch reconnects and resumes to the end.
func TestWatchAcrossRestart(t *testing.T) {
	first := &watchJobs{units: []uint64{1, 2}}
	srv1, addr := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterJobServiceServer(s, first) })
	cl := connectT(t, Options{Address: addr})

	var seen []uint64
	var received atomic.Int32 // snapshots the client has handed to the callback
	retries := 0
	p := Policy{Base: 50 * time.Millisecond, Cap: 200 * time.Millisecond}.WithOnRetry(func(int, error, time.Duration) { retries++ })
	done := make(chan struct{})
	var final *arbiterv1.Job
	var err error
	go func() {
		defer close(done)
		final, err = cl.WatchJob(context.Background(), "p1", p, func(j *arbiterv1.Job) {
			seen = append(seen, j.GetProgress().GetUnitsDone())
			received.Add(1)
		})
	}()
	// Wait until the client has both snapshots, not until the server has
	// sent them: a message sent but still in flight when the server stops
	// is lost, as it would be in a real restart.
	deadline := time.Now().Add(10 * time.Second)
	for received.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the client received %d of the first server's 2 snapshots", received.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv1.Stop()
	// Down for a while: reconnection attempts are refused.
	time.Sleep(400 * time.Millisecond)
	second := &watchJobs{units: []uint64{5}, finish: true}
	serve(t, addr, nil, func(s *grpc.Server) { arbiterv1.RegisterJobServiceServer(s, second) })

	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not resume after the restart")
	}
	if err != nil || final.GetState() != arbiterv1.JobState_JOB_STATE_DONE {
		t.Fatalf("final %v, err %v", final, err)
	}
	if len(seen) != 4 || seen[0] != 1 || seen[1] != 2 || seen[2] != 5 || seen[3] != 10 {
		t.Errorf("snapshots %v, want [1 2 5 10]", seen)
	}
	if retries < 1 {
		t.Errorf("no retry reported across the restart")
	}
}

// TestWatchStopsOnRefusal: an unknown job is not retried; a bounded
// policy gives up on an absent coordinator; Ctrl-C ends the wait.
func TestWatchStopsOnRefusal(t *testing.T) {
	jobs := &watchJobs{}
	_, addr := serve(t, "127.0.0.1:0", nil, func(s *grpc.Server) { arbiterv1.RegisterJobServiceServer(s, jobs) })
	cl := connectT(t, Options{Address: addr})
	if _, err := cl.WatchJob(context.Background(), "nope", Persistent, nil); Code(err) != codes.NotFound {
		t.Errorf("unknown job: %v", err)
	}

	gone := connectT(t, Options{Address: closedAddr(t)})
	start := time.Now()
	_, err := gone.WatchJob(context.Background(), "p1", Policy{Base: 20 * time.Millisecond, MaxElapsed: 300 * time.Millisecond}, nil)
	if ExitCode(gone.Err("watch", err)) != ExitUnreachable || time.Since(start) > 5*time.Second {
		t.Errorf("absent coordinator: %v after %v", err, time.Since(start))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := gone.WatchJob(ctx, "p1", Persistent, nil); err != context.DeadlineExceeded {
		t.Errorf("interrupted watch: %v", err)
	}
}
