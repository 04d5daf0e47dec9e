package verify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/base/logging"
	"github.com/arbiter-chess/arbiter/coordinator/store"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/wire/verifyproto"
)

// Reports. A session lives in memory while its client asks; what it found
// is reported by the client at the end (ReportVerifySession) and stored, so
// the web pages show a session's findings long after it ended. Every field
// of a report is bounded before it is stored: a report costs the store at
// most MaxReportedPositions × MaxPositionReportBytes per session.

// Bounds on what a session may report.
const (
	// MaxReportedPositions bounds the position reports a session keeps;
	// its summary still counts every position.
	MaxReportedPositions = 1000
	// MaxReportBatch bounds the positions of one call.
	MaxReportBatch = 64
	// MaxPositionReportBytes bounds one position's encoded report.
	MaxPositionReportBytes = 64 << 10

	maxFindings     = 64
	maxIssues       = 256 // more than the legal moves of any position
	maxNotes        = 64
	maxMoves        = 1000
	maxMoveBytes    = 8
	maxFENBytes     = 128
	maxTextBytes    = 1000 // reasons, notes, reference mismatch
	maxLongText     = 4096 // command, error
	maxNameBytes    = 200
	maxNumberBytes  = 64 // decimal counts (128 bits need 39 digits)
	maxWorkerCounts = 4096
)

func badReport(format string, args ...any) error {
	return apierr.Invalid("verify report: "+format, args...)
}

func checkText(what, s string, limit int) error {
	if len(s) > limit {
		return badReport("%s %s: longer than %d bytes", what, apierr.Q(s), limit)
	}
	return nil
}

// checkSummary refuses a summary with a field out of bounds.
func checkSummary(s *arbiterv1.VerifySessionSummary) error {
	if s == nil {
		return badReport("summary missing")
	}
	if err := checkText("engine", s.GetEngine(), maxNameBytes); err != nil {
		return err
	}
	if s.GetOk()+s.GetBugs()+s.GetErrors() != s.GetPositions() {
		return badReport("summary: %d ok + %d bugs + %d errors is not %d positions", s.GetOk(), s.GetBugs(), s.GetErrors(), s.GetPositions())
	}
	if len(s.GetUnitsByWorker()) > maxWorkerCounts {
		return badReport("summary: %d workers, at most %d", len(s.GetUnitsByWorker()), maxWorkerCounts)
	}
	for w := range s.GetUnitsByWorker() {
		if err := checkText("worker id", w, maxNameBytes); err != nil {
			return err
		}
	}
	return nil
}

// checkPosition refuses a position report with a field out of bounds.
func checkPosition(i int, p *arbiterv1.VerifyPositionReport) error {
	where := fmt.Sprintf("position %d", i)
	switch p.GetStatus() {
	case "ok", "bug", "error":
	default:
		return badReport("%s: status %s (want ok, bug or error)", where, apierr.Q(p.GetStatus()))
	}
	for _, f := range []struct {
		what  string
		s     string
		limit int
	}{{"id", p.GetId(), maxNameBytes}, {"FEN", p.GetFen(), maxFENBytes}, {"reference", p.GetReference(), maxNumberBytes},
		{"reference source", p.GetReferenceFrom(), maxNameBytes}, {"engine total", p.GetEngineTotal(), maxNumberBytes},
		{"reference mismatch", p.GetReferenceMismatch(), maxTextBytes}, {"error", p.GetError(), maxLongText}} {
		if err := checkText(where+": "+f.what, f.s, f.limit); err != nil {
			return err
		}
	}
	if len(p.GetFindings()) > maxFindings {
		return badReport("%s: %d findings, at most %d", where, len(p.GetFindings()), maxFindings)
	}
	for k, f := range p.GetFindings() {
		fw := fmt.Sprintf("%s finding %d", where, k)
		if err := checkText(fw+": root FEN", f.GetRootFen(), maxFENBytes); err != nil {
			return err
		}
		if err := checkText(fw+": FEN", f.GetFen(), maxFENBytes); err != nil {
			return err
		}
		if err := checkText(fw+": command", f.GetCommand(), maxLongText); err != nil {
			return err
		}
		if len(f.GetMoves()) > maxMoves {
			return badReport("%s: %d moves, at most %d", fw, len(f.GetMoves()), maxMoves)
		}
		for _, m := range f.GetMoves() {
			if err := checkText(fw+": move", m, maxMoveBytes); err != nil {
				return err
			}
		}
		if len(f.GetIllegal()) > maxIssues || len(f.GetMissed()) > maxIssues || len(f.GetNotes()) > maxNotes {
			return badReport("%s: %d illegal, %d missed moves and %d notes; at most %d, %d and %d", fw,
				len(f.GetIllegal()), len(f.GetMissed()), len(f.GetNotes()), maxIssues, maxIssues, maxNotes)
		}
		for _, m := range append(append([]*arbiterv1.VerifyMoveIssue{}, f.GetIllegal()...), f.GetMissed()...) {
			if err := checkText(fw+": move", m.GetMove(), maxMoveBytes); err != nil {
				return err
			}
			if err := checkText(fw+": reason", m.GetReason(), maxTextBytes); err != nil {
				return err
			}
		}
		for _, n := range f.GetNotes() {
			if err := checkText(fw+": note", n, maxTextBytes); err != nil {
				return err
			}
		}
	}
	return nil
}

// Report stores what session sid found on behalf of caller: the summary and
// positions [first, first+len(positions)) of its reported positions. It
// returns the number of position reports the session holds.
func (w *Workload) Report(ctx context.Context, caller identity.Identity, sid string, summary *arbiterv1.VerifySessionSummary,
	first uint32, positions []*arbiterv1.VerifyPositionReport) (int, error) {
	if !caller.CanSubmit() {
		return 0, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole,
			"credential %s has role %s, which may not report verify sessions", apierr.Q(caller.Name), caller.Role)
	}
	if len(sid) < 8 || len(sid) > 64 || !idRE.MatchString(sid) {
		return 0, apierr.Invalid("session id %s: want 8 to 64 letters, digits or '-'", apierr.Q(sid))
	}
	if w.store == nil {
		return 0, apierr.New(apierr.FailedPrecondition, apierr.ReasonBadInput, "this coordinator keeps no verify reports")
	}
	if err := checkSummary(summary); err != nil {
		return 0, err
	}
	if len(positions) > MaxReportBatch {
		return 0, badReport("%d positions in one call, at most %d", len(positions), MaxReportBatch)
	}
	if uint64(first)+uint64(len(positions)) > MaxReportedPositions {
		return 0, apierr.New(apierr.ResourceExhausted, apierr.ReasonTooLarge,
			"verify report: positions up to %d; a session keeps at most %d", uint64(first)+uint64(len(positions)), MaxReportedPositions)
	}
	blobs := make([][]byte, len(positions))
	for i, p := range positions {
		if err := checkPosition(int(first)+i, p); err != nil {
			return 0, err
		}
		b, err := proto.Marshal(p)
		if err != nil {
			return 0, badReport("position %d: %v", int(first)+i, err)
		}
		if len(b) > MaxPositionReportBytes {
			return 0, badReport("position %d: %d bytes encoded, at most %d", int(first)+i, len(b), MaxPositionReportBytes)
		}
		blobs[i] = b
	}
	sumBytes, err := proto.Marshal(summary)
	if err != nil {
		return 0, badReport("summary: %v", err)
	}
	now := w.now()
	started := now
	w.mu.Lock()
	if s := w.sessions[sid]; s != nil {
		if s.owner != caller.Name && !caller.IsAdmin() {
			w.mu.Unlock()
			return 0, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "verify session %s belongs to another identity", apierr.Q(sid))
		}
		started = s.started
	}
	w.mu.Unlock()
	vs := storedSession{ID: sid, Owner: caller.Name, Engine: summary.GetEngine(), Depth: int(summary.GetDepth()),
		CreatedAt: started, ReportedAt: now, Positions: int(summary.GetPositions()), OK: int(summary.GetOk()),
		Bugs: int(summary.GetBugs()), Errors: int(summary.GetErrors()), Finds: int(summary.GetFindings()),
		Seconds: summary.GetSeconds(), Summary: sumBytes}
	held, err := putReports(ctx, w.store, vs, int(first), blobs, MaxReportedPositions)
	switch {
	case errors.Is(err, errOwner):
		return 0, apierr.New(apierr.PermissionDenied, apierr.ReasonWrongRole, "verify session %s was reported by another identity", apierr.Q(sid))
	case err != nil:
		return 0, apierr.Store(err)
	}
	w.log.Info("verify session reported", zap.String(logging.JobID, Prefix+sid), zap.String("owner", caller.Name),
		zap.Uint32("positions", summary.GetPositions()), zap.Uint32("bugs", summary.GetBugs()), zap.Int("reports_stored", held))
	return held, nil
}

// SessionView is a verify session as the web pages show it.
type SessionView = verifyproto.SessionView

// live fills in what memory knows of a session. Caller holds mu.
func liveView(s *session) SessionView {
	v := SessionView{ID: s.id, Owner: s.owner, Engine: s.engine, Live: true, Units: len(s.units), Started: s.started, LastUsed: s.lastUsed}
	for _, u := range s.units {
		if u.result != nil {
			v.Done++
		}
		if u.holder != "" {
			v.Leased++
		}
	}
	return v
}

func addReport(v *SessionView, r storedSession) {
	v.ID, v.Owner, v.Reported = r.ID, r.Owner, true
	if v.Engine == "" {
		v.Engine = r.Engine
	}
	if v.Started.IsZero() {
		v.Started = r.CreatedAt
	}
	v.Depth, v.Positions, v.OK, v.Bugs, v.Errors, v.Findings = r.Depth, r.Positions, r.OK, r.Bugs, r.Errors, r.Finds
	v.Seconds, v.ReportedAt, v.StoredReports = r.Seconds, r.ReportedAt, r.Reported
	sum := &arbiterv1.VerifySessionSummary{}
	if proto.Unmarshal(r.Summary, sum) == nil {
		v.Summary = sum
	}
}

// Sessions returns live sessions (most recently asked first) and then
// reported ones (most recently reported first), skipping offset of them, at
// most limit, and the number in all. A live session that was reported
// shows both.
func (w *Workload) Sessions(ctx context.Context, offset, limit int) ([]SessionView, int, error) {
	w.mu.Lock()
	live := make([]SessionView, 0, len(w.sessions))
	for _, s := range w.sessions {
		live = append(live, liveView(s))
	}
	w.mu.Unlock()
	sort.Slice(live, func(i, j int) bool {
		if !live[i].LastUsed.Equal(live[j].LastUsed) {
			return live[i].LastUsed.After(live[j].LastUsed)
		}
		return live[i].ID < live[j].ID
	})
	byID := map[string]int{}
	for i, v := range live {
		byID[v.ID] = i
	}
	if w.store == nil {
		total := len(live)
		return page(live, offset, limit), total, nil
	}
	// Reported sessions that are live are shown once, in the live part;
	// read enough stored ones to fill the page after them.
	need := offset + limit
	stored, total, err := storedSessions(ctx, w.store, 0, need+len(live))
	if err != nil {
		return nil, 0, apierr.Store(err)
	}
	out := live
	dups := 0
	for _, r := range stored {
		if i, ok := byID[r.ID]; ok {
			addReport(&out[i], r)
			dups++
			continue
		}
		var v SessionView
		addReport(&v, r)
		out = append(out, v)
	}
	return page(out, offset, limit), len(live) + total - dups, nil
}

func page(vs []SessionView, offset, limit int) []SessionView {
	if offset >= len(vs) {
		return nil
	}
	return vs[offset:min(len(vs), offset+limit)]
}

// Session returns one session, live or reported (UNKNOWN_JOB when neither).
func (w *Workload) Session(ctx context.Context, sid string) (SessionView, error) {
	sid = strings.TrimPrefix(sid, Prefix)
	w.mu.Lock()
	var v SessionView
	s := w.sessions[sid]
	if s != nil {
		v = liveView(s)
	}
	w.mu.Unlock()
	if w.store != nil && len(sid) <= 64 && idRE.MatchString(sid) {
		r, err := storedSessionByID(ctx, w.store, sid)
		switch {
		case err == nil:
			addReport(&v, r)
		case !errors.Is(err, store.ErrNotFound):
			return v, apierr.Store(err)
		}
	}
	if !v.Live && !v.Reported {
		return v, apierr.New(apierr.NotFound, apierr.ReasonUnknownJob, "unknown verify session %s", apierr.Q(sid))
	}
	return v, nil
}

// Reports returns a session's stored position reports, skipping offset of
// them, at most limit.
func (w *Workload) Reports(ctx context.Context, sid string, offset, limit int) ([]*arbiterv1.VerifyPositionReport, error) {
	if w.store == nil {
		return nil, nil
	}
	blobs, err := storedReports(ctx, w.store, strings.TrimPrefix(sid, Prefix), offset, limit)
	if err != nil {
		return nil, apierr.Store(err)
	}
	out := make([]*arbiterv1.VerifyPositionReport, 0, len(blobs))
	for _, b := range blobs {
		r := &arbiterv1.VerifyPositionReport{}
		if err := proto.Unmarshal(b, r); err != nil {
			w.log.Warn("stored verify report unreadable", zap.String(logging.JobID, Prefix+sid), zap.Error(err))
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
