package spsaplan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/arbiter-chess/arbiter/base/apierr"
	"github.com/arbiter-chess/arbiter/spsa"
)

// A local tune's record (--record FILE) is what the coordinator's store is
// to a cluster tune: the tune's design and the updates in the order they
// were applied, one line each, synced before the next batch is taken. A
// tune started again with the same record replays it (spsa.Replay: θ
// exactly as it stood) and plays only the batches it lacks:
//
//	# arbiter tune record ...
//	tune {"config":{...},"setup":"..."}
//	update BATCH WINS LOSSES
//
// A last line cut short by a kill is dropped (that batch is played again).

// MaxRecordBytes bounds a record file (a million updates fit).
const MaxRecordBytes = 64 << 20

const recordComment = "# arbiter tune record: the updates of a local tune in the order applied (arbiter tune --record resumes from it)\n"

// recordHeader is what a record must match to be resumed.
type recordHeader struct {
	Config spsa.Config `json:"config"`
	// Setup is the engine, limits and book the batches were played with.
	Setup string `json:"setup"`
}

// record appends updates to a record file.
type record struct {
	f    *os.File
	path string
}

// openRecord opens path, creating it with the header, or reads the
// updates it holds when it records the same tune. Errors name --record.
func openRecord(path string, h recordHeader) (*record, []spsa.Update, error) {
	head, err := json.Marshal(h)
	if err != nil {
		return nil, nil, fmt.Errorf("--record: %v", err)
	}
	q := apierr.Q(path)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, fmt.Errorf("--record %s: %v", q, err)
	case len(b) > MaxRecordBytes:
		return nil, nil, fmt.Errorf("--record %s: %d bytes, at most %d", q, len(b), MaxRecordBytes)
	}
	var updates []spsa.Update
	keep := 0 // bytes of complete lines
	if len(b) > 0 {
		if updates, keep, err = parseRecord(b, head); err != nil {
			return nil, nil, fmt.Errorf("--record %s: %v", q, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("--record %s: %v", q, err)
	}
	r := &record{f: f, path: path}
	if err := r.start(b, keep, head); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("--record %s: %v", q, err)
	}
	return r, updates, nil
}

// start leaves the file holding its complete lines (or a new header) with
// the offset at its end.
func (r *record) start(old []byte, keep int, head []byte) error {
	if keep == 0 {
		if err := r.f.Truncate(0); err != nil {
			return err
		}
		if _, err := r.f.WriteString(recordComment + "tune " + string(head) + "\n"); err != nil {
			return err
		}
		return r.f.Sync()
	}
	if keep < len(old) {
		if err := r.f.Truncate(int64(keep)); err != nil {
			return err
		}
	}
	_, err := r.f.Seek(int64(keep), io.SeekStart)
	return err
}

// parseRecord reads a record's updates and the length of its complete
// lines; the header must be head.
func parseRecord(b []byte, head []byte) (updates []spsa.Update, keep int, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), MaxRecordBytes)
	lineNo, pos, sawHeader := 0, 0, false
	seen := map[int]bool{}
	for sc.Scan() {
		line := sc.Text()
		lineNo++
		end := pos + len(line) + 1
		if end > len(b) {
			// No line break: a write cut short. The batch is played again.
			break
		}
		pos = end
		switch {
		case strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "tune "):
			if sawHeader {
				return nil, 0, fmt.Errorf("line %d: a second tune line", lineNo)
			}
			sawHeader = true
			if err := sameTune([]byte(line[len("tune "):]), head); err != nil {
				return nil, 0, err
			}
		case strings.HasPrefix(line, "update "):
			if !sawHeader {
				return nil, 0, fmt.Errorf("line %d: an update before the tune line", lineNo)
			}
			u, err := parseUpdate(line)
			if err != nil {
				return nil, 0, fmt.Errorf("line %d: %v", lineNo, err)
			}
			if seen[u.Batch] {
				return nil, 0, fmt.Errorf("line %d: batch %d applied twice", lineNo, u.Batch)
			}
			seen[u.Batch] = true
			updates = append(updates, u)
		default:
			return nil, 0, fmt.Errorf("line %d: %s is not a record line (want tune or update)", lineNo, apierr.Q(line))
		}
		keep = pos
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	if !sawHeader {
		return nil, 0, nil // cut short before its header: start again
	}
	return updates, keep, nil
}

// sameTune refuses a record of another tune, saying what differs.
func sameTune(got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	var g, w recordHeader
	if err := json.Unmarshal(got, &g); err != nil {
		return fmt.Errorf("the tune line is not a tune's design: %v", err)
	}
	json.Unmarshal(want, &w)
	if g.Setup != w.Setup {
		return fmt.Errorf("it records a tune played with %s, not %s; give another file to start a new tune", apierr.Q(g.Setup), apierr.Q(w.Setup))
	}
	return errors.New("it records a tune of other parameters, pairs, batch size, schedule or seed; give another file to start a new tune")
}

func parseUpdate(line string) (spsa.Update, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return spsa.Update{}, fmt.Errorf("%s: want update BATCH WINS LOSSES", apierr.Q(line))
	}
	var n [3]int
	for i, s := range f[1:] {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			return spsa.Update{}, fmt.Errorf("%s: %s is not a count", apierr.Q(line), apierr.Q(s))
		}
		n[i] = v
	}
	return spsa.Update{Batch: n[0], Wins: n[1], Losses: n[2]}, nil
}

// add appends an update and syncs it.
func (r *record) add(u spsa.Update) error {
	if _, err := fmt.Fprintf(r.f, "update %d %d %d\n", u.Batch, u.Wins, u.Losses); err != nil {
		return fmt.Errorf("--record %s: %v", apierr.Q(r.path), err)
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("--record %s: %v", apierr.Q(r.path), err)
	}
	return nil
}

func (r *record) close() error { return r.f.Close() }
