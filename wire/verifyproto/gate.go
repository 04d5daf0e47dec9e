package verifyproto

// The movegen gate on the wire: a worker's failed verdict
// (verify.GateVerdict) as a MovegenGateFailure, and the coordinator's
// check of one before it fails a test with it.
//
// Invariant: a failure the coordinator accepts is true of chess on the
// coordinator's own move generator: its position is reached from a suite
// position by legal moves, every move it calls illegal is illegal there,
// and every move it calls missed is legal there. What the engine printed
// cannot be checked without running it; that part is the lease holder's
// word, as its games are.

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/arbiter-chess/arbiter/base/textcheck"
	"github.com/arbiter-chess/arbiter/engine"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/verify"
)

// Bounds of a gate failure: the suite's depths are at most 3, a position
// has at most 218 moves, and the message quotes a few divide lines.
const (
	maxGateMoves      = 8
	maxGateMoveList   = 256
	MaxGateMessage    = 4096
	maxGateFieldBytes = 200
)

// GateFailureToProto is a failed (or no-perft) verdict on the wire.
func GateFailureToProto(v verify.GateVerdict) *arbiterv1.MovegenGateFailure {
	f := &arbiterv1.MovegenGateFailure{Engine: v.Engine, Message: v.Message, NoPerft: v.NoPerft,
		RootFen: v.Target.FEN, Depth: uint32(v.Target.Depth), Chess960: v.Target.Chess960}
	if r := v.Report; r != nil {
		f.RootFen = r.FEN
	}
	if fd := v.Finding(); fd != nil {
		f.Moves, f.Fen = fd.Moves, fd.FEN
	}
	f.Illegal, f.Missed = v.WrongMoves()
	f.Message = oneLine(f.Message)
	return f
}

// oneLine makes an engine's words (its stderr may be in a message) one
// line of text the coordinator takes: no control or invisible characters,
// valid UTF-8, at most MaxGateMessage bytes.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "?")
	for {
		_, at, found := textcheck.FirstControl(s)
		if !found {
			break
		}
		_, size := utf8.DecodeRuneInString(s[at:])
		s = s[:at] + " " + s[at+size:]
	}
	if len(s) > MaxGateMessage {
		s = strings.ToValidUTF8(s[:MaxGateMessage], "")
	}
	return s
}

// CheckGateFailure checks a worker's gate failure before it fails a test:
// the engine is one of gated (the test's engines with the gate on), the
// message is one line of text of bounded size that names the engine and
// the position, and the finding holds on Arbiter's own generator.
func CheckGateFailure(f *arbiterv1.MovegenGateFailure, gated []string) error {
	if !slices.Contains(gated, f.GetEngine()) {
		return fmt.Errorf("movegen gate failure of engine %q: not an engine of this test with perft-gate", clipName(f.GetEngine()))
	}
	msg := f.GetMessage()
	if msg == "" || len(msg) > MaxGateMessage {
		return fmt.Errorf("movegen gate failure: message empty or over %d bytes", MaxGateMessage)
	}
	if err := textcheck.Check("movegen gate message", msg); err != nil {
		return err
	}
	if !strings.Contains(msg, fmt.Sprintf("%q", f.GetEngine())) {
		return fmt.Errorf("movegen gate failure: the message does not name engine %q", f.GetEngine())
	}
	if f.GetNoPerft() {
		return nil
	}
	root, err := suitePosition(f)
	if err != nil {
		return err
	}
	return checkFinding(f, root)
}

// suitePosition is the gate suite's position the failure starts from
// (refused when it is not one of the suite's, at its depth).
func suitePosition(f *arbiterv1.MovegenGateFailure) (engine.Position, error) {
	for _, t := range verify.GateSuite {
		p, err := engine.ParseFEN(t.FEN)
		if err != nil {
			return p, fmt.Errorf("gate suite position %q: %v", t.ID, err)
		}
		p.SetChess960(t.Chess960)
		if p.FEN() == f.GetRootFen() && t.Chess960 == f.GetChess960() && uint32(t.Depth) == f.GetDepth() {
			return p, nil
		}
	}
	return engine.Position{}, fmt.Errorf("movegen gate failure: root %q at depth %d is not a position of the gate's suite", clipName(f.GetRootFen()), f.GetDepth())
}

// checkFinding replays the moves from root and checks the finding's move
// lists at the position reached.
func checkFinding(f *arbiterv1.MovegenGateFailure, root engine.Position) error {
	moves, illegal, missed := f.GetMoves(), f.GetIllegal(), f.GetMissed()
	switch {
	case len(moves) > maxGateMoves || len(moves) >= int(f.GetDepth()):
		return fmt.Errorf("movegen gate failure: %d moves from the root of a depth-%d position", len(moves), f.GetDepth())
	case len(illegal) > maxGateMoveList || len(missed) > maxGateMoveList:
		return fmt.Errorf("movegen gate failure: over %d moves listed", maxGateMoveList)
	case len(illegal)+len(missed) == 0:
		return fmt.Errorf("movegen gate failure: no illegal or missed move")
	}
	pos := root
	for i, mv := range moves {
		m, err := pos.ParseUCIMove(mv)
		if err != nil {
			return fmt.Errorf("movegen gate failure: move %d %q from the root: %v", i+1, clipName(mv), err)
		}
		pos.MakeMove(m)
	}
	if pos.FEN() != f.GetFen() {
		return fmt.Errorf("movegen gate failure: the moves reach %s, not %q", pos.FEN(), clipName(f.GetFen()))
	}
	for _, mv := range illegal {
		if _, err := pos.ParseUCIMove(mv); err == nil {
			return fmt.Errorf("movegen gate failure: %q is called illegal at %s but is legal", clipName(mv), pos.FEN())
		}
	}
	for _, mv := range missed {
		if _, err := pos.ParseUCIMove(mv); err != nil {
			return fmt.Errorf("movegen gate failure: %q is called missed at %s but is not legal there", clipName(mv), pos.FEN())
		}
	}
	return nil
}

func clipName(s string) string {
	if len(s) > maxGateFieldBytes {
		return s[:maxGateFieldBytes] + "..."
	}
	return s
}
