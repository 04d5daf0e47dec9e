package verify

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func codeOf(err error) apierr.Code {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae.Code
	}
	return 0
}

func bugReport() *arbiterv1.VerifyPositionReport {
	return &arbiterv1.VerifyPositionReport{Id: "fen", Fen: "8/8/8/8/8/8/8/K6k w - - 0 1", Depth: 2, Status: "bug", Reference: "9",
		ReferenceFrom: "arbiter", EngineTotal: "8", Findings: []*arbiterv1.VerifyFinding{{
			RootFen: "8/8/8/8/8/8/8/K6k w - - 0 1", Moves: []string{"a1a2"}, Fen: "8/8/8/8/8/8/K7/7k b - - 1 1", Depth: 1,
			Missed: []*arbiterv1.VerifyMoveIssue{{Move: "h1g1", Reason: "king move"}}, Command: "arbiter verify ..."}}}
}

// Reports are checked field by field, stored under their owner, and shown
// with the live session.
func TestReport(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1e9, 0)
	w := New(Config{Store: st, Now: func() time.Time { return now }})
	ctx := context.Background()
	carol := identity.Identity{Name: "carol", Role: identity.Client}
	mallory := identity.Identity{Name: "mallory", Role: identity.Client}
	worker := identity.Identity{Name: "w", Role: identity.Worker}
	sum := &arbiterv1.VerifySessionSummary{Engine: "bug", Depth: 2, Positions: 3, Ok: 2, Bugs: 1, Findings: 1, Units: 5}
	unit := &arbiterv1.VerifyUnit{Engine: &arbiterv1.VerifyEngine{Name: "bug"},
		Query: &arbiterv1.VerifyQuery{Fen: "8/8/8/8/8/8/8/K6k w - - 0 1", Depth: 2}}
	if _, err := w.RunUnit(ctx, carol, "s-session", "k1", unit, 0); err != nil {
		t.Fatal(err)
	}

	long := strings.Repeat("x", 5000)
	bad := []struct {
		name string
		edit func(*arbiterv1.VerifySessionSummary, *arbiterv1.VerifyPositionReport)
	}{
		{"status", func(_ *arbiterv1.VerifySessionSummary, p *arbiterv1.VerifyPositionReport) { p.Status = "maybe" }},
		{"FEN", func(_ *arbiterv1.VerifySessionSummary, p *arbiterv1.VerifyPositionReport) { p.Fen = long }},
		{"command", func(_ *arbiterv1.VerifySessionSummary, p *arbiterv1.VerifyPositionReport) {
			p.Findings[0].Command = long
		}},
		{"move", func(_ *arbiterv1.VerifySessionSummary, p *arbiterv1.VerifyPositionReport) {
			p.Findings[0].Moves = []string{long}
		}},
		{"reason", func(_ *arbiterv1.VerifySessionSummary, p *arbiterv1.VerifyPositionReport) {
			p.Findings[0].Missed[0].Reason = long
		}},
		{"findings", func(_ *arbiterv1.VerifySessionSummary, p *arbiterv1.VerifyPositionReport) {
			for len(p.Findings) <= maxFindings {
				p.Findings = append(p.Findings, p.Findings[0])
			}
		}},
		{"counts", func(s *arbiterv1.VerifySessionSummary, _ *arbiterv1.VerifyPositionReport) { s.Ok = 7 }},
	}
	for _, b := range bad {
		s, p := proto.Clone(sum).(*arbiterv1.VerifySessionSummary), bugReport()
		b.edit(s, p)
		_, err := w.Report(ctx, carol, "s-session", s, 0, []*arbiterv1.VerifyPositionReport{p})
		if codeOf(err) != apierr.InvalidArgument || len(err.Error()) > 400 {
			t.Errorf("%s: %v", b.name, err)
		}
	}
	if _, err := w.Report(ctx, carol, "s-session", sum, MaxReportedPositions, []*arbiterv1.VerifyPositionReport{bugReport()}); codeOf(err) != apierr.ResourceExhausted {
		t.Errorf("past the limit: %v", err)
	}
	if _, err := w.Report(ctx, worker, "s-session", sum, 0, nil); codeOf(err) != apierr.PermissionDenied {
		t.Errorf("worker credential: %v", err)
	}
	if _, err := w.Report(ctx, mallory, "s-session", sum, 0, nil); codeOf(err) != apierr.PermissionDenied {
		t.Errorf("another identity: %v", err)
	}
	if _, err := w.Report(ctx, carol, "bad id!", sum, 0, nil); codeOf(err) != apierr.InvalidArgument {
		t.Errorf("bad session id: %v", err)
	}
	if v, err := w.Session(ctx, "s-session"); err != nil || v.Reported || !v.Live {
		t.Fatalf("nothing stored by refused reports: %+v %v", v, err)
	}

	n, err := w.Report(ctx, carol, "s-session", sum, 0, []*arbiterv1.VerifyPositionReport{bugReport()})
	if err != nil || n != 1 {
		t.Fatalf("report: %d %v", n, err)
	}
	v, err := w.Session(ctx, Prefix+"s-session")
	if err != nil || !v.Live || !v.Reported || v.Units != 1 || v.Bugs != 1 || v.Owner != "carol" || v.Engine != "bug" || v.StoredReports != 1 {
		t.Fatalf("session: %+v %v", v, err)
	}
	rs, err := w.Reports(ctx, "s-session", 0, 10)
	if err != nil || len(rs) != 1 || !proto.Equal(rs[0], bugReport()) {
		t.Fatalf("reports: %v %v", rs, err)
	}
	list, total, err := w.Sessions(ctx, 0, 10)
	if err != nil || total != 1 || len(list) != 1 || !list[0].Live || !list[0].Reported {
		t.Fatalf("sessions: %d %+v %v", total, list, err)
	}
	// After the session closes its report stays.
	if _, err := w.CloseSession(carol, "s-session"); err != nil {
		t.Fatal(err)
	}
	if v, err := w.Session(ctx, "s-session"); err != nil || v.Live || !v.Reported {
		t.Fatalf("closed session: %+v %v", v, err)
	}
	if _, err := w.Session(ctx, "s-unknown"); codeOf(err) != apierr.NotFound {
		t.Fatalf("unknown session: %v", err)
	}
}
