package verifyclient

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/arbiter-chess/arbiter/client/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/verify"
)

// What the coordinator keeps of a session's report (the limits of kinds/verify):
// at most maxReported positions, sent maxBatch at a time, each at most
// maxPositionBytes encoded with at most maxFindings findings.
const (
	maxReported      = 1000
	maxBatch         = 64
	maxPositionBytes = 64 << 10
	maxFindings      = 64
	maxIssues        = 256
	maxNotes         = 64
)

// EngineArg is the --engine argument of a local `arbiter verify` run of the
// engine: the worker's engine name as its program, with the session's
// arguments, protocol and options. It is what the reproducing commands of
// findings name.
func (e *Engine) EngineArg() string {
	s := e.cfg.Spec
	es := enginespec.Spec{Cmd: e.cfg.Name, Args: s.Args}
	if s.Proto != "" && s.Proto != verify.ProtoUCI {
		es.Proto = enginespec.Proto(s.Proto)
	}
	for _, o := range s.Options {
		es.Options = append(es.Options, enginespec.Setting{Key: o.Name, Value: o.Value})
	}
	return es.String()
}

// Report sends what the session found to the coordinator, which keeps it
// for its web pages: a summary of every report, and each position that is
// not ok with its findings (at most 1000 positions; each finding with the
// command that reproduces it). depth is the session's depth and elapsed its
// wall time. It returns the number of position reports the coordinator
// holds.
func (e *Engine) Report(ctx context.Context, reports []verify.Report, depth int, elapsed time.Duration) (int, error) {
	units, byWorker := e.Stats()
	sum := &arbiterv1.VerifySessionSummary{Engine: e.Name(), Depth: uint32(depth), Seconds: elapsed.Seconds(),
		Units: uint32(units), UnitsByWorker: map[string]uint32{}}
	for w, n := range byWorker {
		sum.UnitsByWorker[w] = uint32(n)
	}
	var bad []*arbiterv1.VerifyPositionReport
	for i := range reports {
		r := &reports[i]
		sum.Positions++
		sum.Findings += uint32(len(r.Findings))
		switch r.Status {
		case "ok":
			sum.Ok++
			continue
		case "bug":
			sum.Bugs++
		default:
			sum.Errors++
		}
		if len(bad) < maxReported {
			bad = append(bad, e.positionProto(r))
		}
	}
	stored := 0
	for first := 0; first == 0 || first < len(bad); first += maxBatch {
		req := &arbiterv1.ReportVerifySessionRequest{SessionId: e.session, Summary: sum, FirstIndex: uint32(first),
			Positions: bad[first:min(len(bad), first+maxBatch)]}
		err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) error {
			resp, err := e.client.ReportVerifySession(ctx, req)
			stored = int(resp.GetStored())
			return err
		})
		if err != nil {
			return stored, e.cfg.Client.Err("report verify session", err)
		}
	}
	return stored, nil
}

// positionProto renders one position's report within the coordinator's
// bounds: findings beyond them are dropped (the count stays in the
// summary).
func (e *Engine) positionProto(r *verify.Report) *arbiterv1.VerifyPositionReport {
	p := &arbiterv1.VerifyPositionReport{Id: r.ID, Fen: r.FEN, Chess960: r.Chess960, Depth: uint32(r.Depth), Status: r.Status,
		Reference: r.Reference, ReferenceFrom: r.ReferenceFrom, EngineTotal: r.EngineTotal, ReferenceMismatch: r.ReferenceMismatch,
		Duplicates: uint32(r.Duplicates), Truncated: r.Truncated, Probes: uint32(r.Probes), Error: clip(r.Error, 4000), Seconds: r.Seconds}
	arg := e.EngineArg()
	for _, f := range r.Findings {
		if len(p.Findings) == maxFindings {
			p.Truncated = true
			break
		}
		fp := &arbiterv1.VerifyFinding{RootFen: f.RootFEN, Moves: f.Moves, Fen: f.FEN, Depth: uint32(f.Depth), Command: f.Command}
		if fp.Command == "" {
			fp.Command = verify.ReproduceCommand(arg, f, r.Chess960)
		}
		fp.Command = clip(fp.Command, 4000)
		for _, m := range f.Illegal[:min(len(f.Illegal), maxIssues)] {
			fp.Illegal = append(fp.Illegal, &arbiterv1.VerifyMoveIssue{Move: m.Move, Reason: clip(m.Reason, 1000)})
		}
		for _, m := range f.Missed[:min(len(f.Missed), maxIssues)] {
			fp.Missed = append(fp.Missed, &arbiterv1.VerifyMoveIssue{Move: m.Move, Reason: clip(m.Reason, 1000)})
		}
		for _, n := range f.Notes[:min(len(f.Notes), maxNotes)] {
			fp.Notes = append(fp.Notes, clip(n, 1000))
		}
		p.Findings = append(p.Findings, fp)
	}
	for len(p.Findings) > 0 && proto.Size(p) > maxPositionBytes {
		p.Findings = p.Findings[:len(p.Findings)-1]
		p.Truncated = true
	}
	return p
}

// clip cuts s to at most n bytes at a character boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
