package perft_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-chess/arbiter/engine"
)

// TestChess960Records reads the published Chess960 tables
// (docs/records/chess960-perft*.md) and checks what can be checked in a
// test's time: the checksum line is the sha256 of the table's lines (as
// `grep '^|' FILE | sha256sum` prints it), the total is the rows' sum, row
// i is start position i in Scharnagl's numbering, row 518 is the
// published perft of the standard start (depths 6, 7 and 8), and a few
// rows of the depth-6 table equal a local count. A table edited by hand
// fails here.
func TestChess960Records(t *testing.T) {
	standard := map[int]uint64{6: 119060324, 7: 3195901860, 8: 84998978956}
	recount := map[int][]int{6: {0, 341, 959}}
	for depth, want518 := range standard {
		path := filepath.Join("..", "..", "docs", "records", "chess960-perft"+strconv.Itoa(depth)+".md")
		rows, sum, total, checksum := readRecord(t, path)
		if len(rows) != 960 {
			t.Fatalf("%s: %d rows, want 960", path, len(rows))
		}
		if sum != total {
			t.Errorf("%s: the rows sum to %d, the total line says %d", path, sum, total)
		}
		if got := hex.EncodeToString(checksum.Sum(nil)); !strings.Contains(recordLine(t, path, "sha256:"), got) {
			t.Errorf("%s: the table's lines hash to %s, not the sha256 line's", path, got)
		}
		for i, r := range rows {
			fen, err := engine.Chess960StartFEN(i)
			if err != nil || r.fen != fen {
				t.Fatalf("%s: row %d is %q, want %q (%v)", path, i, r.fen, fen, err)
			}
		}
		if rows[518].nodes != want518 {
			t.Errorf("%s: row 518 %d, want the published %d", path, rows[518].nodes, want518)
		}
		for _, i := range recount[depth] {
			p, err := engine.ParseFEN(rows[i].fen)
			if err != nil {
				t.Fatal(err)
			}
			if n := engine.Perft(&p, depth); n != rows[i].nodes {
				t.Errorf("%s: row %d says %d, a local perft %d counts %d", path, i, rows[i].nodes, depth, n)
			}
		}
	}
}

type recordRow struct {
	fen   string
	nodes uint64
}

func readRecord(t *testing.T, path string) (rows []recordRow, sum, total uint64, checksum interface {
	Write([]byte) (int, error)
	Sum([]byte) []byte
}) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Total:") {
			total, _ = strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "Total:")), 10, 64)
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		h.Write([]byte(line + "\n"))
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Fatalf("%s: %q is not a row of three cells", path, line)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(cells[2]), 10, 64)
		if err != nil {
			continue // the header and its separator
		}
		if idx, _ := strconv.Atoi(strings.TrimSpace(cells[0])); idx != len(rows) {
			t.Fatalf("%s: row %d numbered %q", path, len(rows), cells[0])
		}
		rows = append(rows, recordRow{fen: strings.TrimSpace(cells[1]), nodes: n})
		sum += n
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows, sum, total, h
}

func recordLine(t *testing.T, path, prefix string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return line
		}
	}
	t.Fatalf("%s: no %q line", path, prefix)
	return ""
}
