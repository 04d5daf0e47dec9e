package coordinator

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// A tune submitted over the real gRPC face is stored and shown like any
// job; a bad one is refused with INVALID_ARGUMENT naming the field, and a
// worker credential may not submit one.
func TestSubmitSpsaOverGRPC(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c, err := New(ctx, Config{Store: st, Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, _, err := c.NewGRPCServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	conn, err := clusterclient.Dial(lis.Addr().String(), clusterclient.Options{Token: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jobs := arbiterv1.NewJobServiceClient(conn)
	spec := func() *arbiterv1.SpsaSpec {
		return &arbiterv1.SpsaSpec{Engine: &arbiterv1.EngineSpec{Name: "dev", Command: "embedded"},
			Params: []*arbiterv1.SpsaParam{{Name: "RFPMargin", Start: 75, Min: 20, Max: 300, CEnd: 5, REnd: 0.002},
				{Name: "AspWindow", Start: 20, Min: 5, Max: 200, CEnd: 3, REnd: 0.002}},
			Pairs: 100, BatchPairs: 4,
			TimeControl: &arbiterv1.TimeControl{Kind: &arbiterv1.TimeControl_Nodes{Nodes: 1000}},
			Openings:    []*arbiterv1.Opening{{Fen: "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}}}
	}
	resp, err := jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: spec()})
	if err != nil {
		t.Fatal(err)
	}
	j := resp.GetJob()
	if j.GetKind() != "spsa" || j.GetState() != arbiterv1.JobState_JOB_STATE_RUNNING || len(j.GetSpsaProgress().GetParams()) != 2 ||
		j.GetSpsaProgress().GetBatchesTotal() != 25 || j.GetSpsa().GetAlpha() != 0.602 {
		t.Fatalf("submitted tune: %v", j)
	}
	got, err := jobs.GetJob(ctx, &arbiterv1.GetJobRequest{JobId: j.GetJobId()})
	if err != nil || got.GetJob().GetSpsaProgress().GetParams()[1].GetCurrent() != 20 {
		t.Fatalf("GetJob: %v %v", got, err)
	}
	bad := spec()
	bad.Params[1].Name = "NoSuchOption"
	_, err = jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: bad})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), `param "NoSuchOption"`) {
		t.Errorf("a parameter the engine lacks: %v", err)
	}
	if _, err := jobs.SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("no spec: %v", err)
	}
	cred, err := arbiterv1.NewAdminServiceClient(conn).CreateCredential(ctx, &arbiterv1.CreateCredentialRequest{Name: "w1", Role: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	wconn, err := clusterclient.Dial(lis.Addr().String(), clusterclient.Options{Token: cred.GetToken()})
	if err != nil {
		t.Fatal(err)
	}
	defer wconn.Close()
	_, err = arbiterv1.NewJobServiceClient(wconn).SubmitSpsa(ctx, &arbiterv1.SubmitSpsaRequest{Spec: spec()})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a worker submitting a tune: %v", err)
	}
	list, err := jobs.ListJobs(ctx, &arbiterv1.ListJobsRequest{})
	if err != nil || len(list.GetJobs()) != 1 {
		t.Fatalf("jobs: %v %v", list, err)
	}
}
