package jobreport

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// SuitePosition is one position of a perft suite job and its count.
type SuitePosition struct {
	Number uint32      `json:"number"`
	FEN    string      `json:"fen"`
	Nodes  json.Number `json:"nodes"`
}

// SuiteJSON is a done suite job's per-position table: positions in the
// suite's order, and the sha256 of the table's Markdown lines.
type SuiteJSON struct {
	First     uint32          `json:"first"`
	Positions []SuitePosition `json:"positions,omitempty"`
	SHA256    string          `json:"sha256,omitempty"`
}

// suitePositions is a suite job's table (nil for a job over one position
// or one not done): its divide, one entry per position in suite order.
func suitePositions(j *arbiterv1.Job) []SuitePosition {
	s := j.GetPerft()
	if s.GetSuiteSize() == 0 || len(j.GetDivide()) == 0 {
		return nil
	}
	out := make([]SuitePosition, len(j.GetDivide()))
	for i, d := range j.GetDivide() {
		out[i] = SuitePosition{Number: s.GetSuiteFirst() + uint32(i), FEN: d.GetMove(), Nodes: json.Number(d.GetNodes())}
	}
	return out
}

// SuiteTable renders a suite's counts as a Markdown table, one line per
// line of text (header and separator first), and the sha256 (hex) of
// those lines, each ended by a newline: two runs that agree on every
// position's count have the same checksum.
func SuiteTable(ps []SuitePosition) ([]string, string) {
	lines := make([]string, 0, len(ps)+2)
	lines = append(lines, "| # | FEN | Nodes |", "|---:|---|---:|")
	for _, p := range ps {
		lines = append(lines, fmt.Sprintf("| %d | %s | %s |", p.Number, p.FEN, p.Nodes))
	}
	h := sha256.New()
	for _, l := range lines {
		h.Write([]byte(l + "\n"))
	}
	return lines, hex.EncodeToString(h.Sum(nil))
}

// NewSuiteJSON is a suite job's table for --json, or nil for a job over
// one position (its Positions are nil until the job is done).
func NewSuiteJSON(j *arbiterv1.Job) *SuiteJSON {
	if j.GetPerft().GetSuiteSize() == 0 {
		return nil
	}
	o := &SuiteJSON{First: j.GetPerft().GetSuiteFirst(), Positions: suitePositions(j)}
	if o.Positions != nil {
		_, o.SHA256 = SuiteTable(o.Positions)
	}
	return o
}
