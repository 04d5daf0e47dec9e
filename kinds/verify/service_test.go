package verify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	_ "github.com/arbiter-chess/arbiter/kinds/install" // the program's kinds, this one among them
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/testing/farmtest"
)

// TestServiceAndPagesFromTheKind: with the kind installed as a program
// installs it (kinds/install), a real coordinator serves VerifyService
// from the kind's registration (workload.Servicer) under the kind's
// admission rules, and the pages, a floor below the kind, show the
// session it stored through web.VerifySessions: its row in the list and
// its page. Controls: a bad session id is refused by the kind's own check
// (not Unimplemented: the service is there), and a session nobody
// reported has no page.
func TestServiceAndPagesFromTheKind(t *testing.T) {
	farm := farmtest.Start(t, 0)
	c := farm.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_, err := c.Verify.RunVerifyUnit(ctx, &arbiterv1.RunVerifyUnitRequest{SessionId: "x", Key: "k",
		Unit: &arbiterv1.VerifyUnit{Engine: &arbiterv1.VerifyEngine{Name: "e"}, Query: &arbiterv1.VerifyQuery{Depth: 1}}})
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), `session id "x"`) {
		t.Fatalf("RunVerifyUnit with session id x: %v, want InvalidArgument naming it", err)
	}

	const sid = "s-kindsmove-0001"
	sum := &arbiterv1.VerifySessionSummary{Engine: "bug", Depth: 2, Positions: 1, Bugs: 1, Findings: 1}
	rep := &arbiterv1.VerifyPositionReport{Id: "p1", Fen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Depth: 3, Status: "bug",
		Findings: []*arbiterv1.VerifyFinding{{RootFen: "4k3/8/P7/8/8/8/8/4K3 w - - 0 1", Moves: []string{"a6a7", "e8d7"},
			Fen: "8/P2k4/8/8/8/8/8/4K3 w - - 1 2", Depth: 1,
			Missed: []*arbiterv1.VerifyMoveIssue{{Move: "a7a8n", Reason: "missing under-promotion to knight"}}}}}
	resp, err := c.Verify.ReportVerifySession(ctx, &arbiterv1.ReportVerifySessionRequest{SessionId: sid, Summary: sum,
		Positions: []*arbiterv1.VerifyPositionReport{rep}})
	if err != nil || resp.GetStored() != 1 {
		t.Fatalf("ReportVerifySession: %v, %d stored; want 1", err, resp.GetStored())
	}

	code, body := farm.Do(t, "GET", "/?kind=verify", nil)
	if code != 200 || !strings.Contains(body, `data-job="verify.`+sid+`"`) {
		t.Errorf("/?kind=verify: %d, no row of session %s\n%s", code, sid, body)
	}
	code, body = farm.Do(t, "GET", "/verify/"+sid, nil)
	if code != 200 || !strings.Contains(body, "missing under-promotion to knight") || !strings.Contains(body, "a6a7 e8d7") {
		t.Errorf("/verify/%s: %d, without the finding\n%s", sid, code, body)
	}
	if code, body := farm.Do(t, "GET", "/verify/s-nothing-here", nil); code != 404 || !strings.Contains(body, "unknown verify session") {
		t.Errorf("/verify/ of no session: %d\n%s", code, body)
	}
}
