package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Match and SPRT tests are jobs (a row in jobs, kind "sprt" or "match")
// with a row in tests (the spec, as the client's protobuf bytes, and the
// running SPRT state as JSON), one row per accepted batch of game pairs, and
// every game's PGN. The tables are created with IF NOT EXISTS, so opening
// an older database adds them and keeps every existing row.
// Test is a match or SPRT test's own row.
type Test struct {
	JobID      string
	Spec       []byte // the MatchSpec, protobuf-encoded
	BatchPairs int
	SPRT       string // JSON of the running sprt.Sequential; "" without SPRT
	// PGNsExpired is when the retention setting deleted the test's games
	// (zero while they are kept).
	PGNsExpired time.Time
}

// Batch is one accepted batch of game pairs. Incidents is opaque to the
// store (the coordinator keeps per-kind counts as "kind:n;kind:n").
type Batch struct {
	UnitID    string
	JobID     string
	Idx       int
	WorkerID  string
	Pairs     int
	Penta     [5]int64
	Wins      int64
	Draws     int64
	Losses    int64
	Incidents string
	LeasedAt  time.Time
	At        time.Time
	ElapsedMS int64
}

// CreateTest stores a test's job row and test row in one transaction.
func (s *Store) CreateTest(ctx context.Context, j *Job, t *Test) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		if err := numberJob(ctx, tx, j); err != nil {
			return err
		}
		if err := insertJob(ctx, tx, j, "[]", ""); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO tests(job_id,spec,batch_pairs,sprt) VALUES(?,?,?,?)",
			j.ID, t.Spec, t.BatchPairs, t.SPRT); err != nil {
			return fmt.Errorf("store: insert test: %w", err)
		}
		return nil
	})
}

// Test returns a test's row.
func (s *Store) Test(ctx context.Context, jobID string) (*Test, error) {
	t := &Test{JobID: jobID}
	var expired int64
	err := s.db.QueryRowContext(ctx, "SELECT spec, batch_pairs, sprt, pgns_expired_at FROM tests WHERE job_id=?", jobID).Scan(&t.Spec, &t.BatchPairs, &t.SPRT, &expired)
	t.PGNsExpired = FromUnixNano(expired)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: test %s: %w", jobID, ErrNotFound)
	}
	return t, err
}

func encodePenta(p [5]int64) string {
	parts := make([]string, 5)
	for i, v := range p {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, ",")
}

func decodePenta(s string) ([5]int64, error) {
	var p [5]int64
	parts := strings.Split(s, ",")
	if len(parts) != 5 {
		return p, fmt.Errorf("store: bad pentanomial %q", s)
	}
	for i, x := range parts {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return p, fmt.Errorf("store: bad pentanomial %q", s)
		}
		p[i] = v
	}
	return p, nil
}

// Batches returns a test's accepted batches in the order they were
// accepted (the order the SPRT saw them).
func (s *Store) Batches(ctx context.Context, jobID string) ([]Batch, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT unit_id, idx, worker_id, pairs, penta, wins, draws, losses, incidents, leased_at, at, elapsed_ms
		FROM batches WHERE job_id=? ORDER BY rowid`, jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Batch
	for rows.Next() {
		b := Batch{JobID: jobID}
		var penta string
		var leased, at int64
		if err := rows.Scan(&b.UnitID, &b.Idx, &b.WorkerID, &b.Pairs, &penta, &b.Wins, &b.Draws, &b.Losses, &b.Incidents,
			&leased, &at, &b.ElapsedMS); err != nil {
			return nil, err
		}
		if b.Penta, err = decodePenta(penta); err != nil {
			return nil, err
		}
		b.LeasedAt, b.At = FromUnixNano(leased), FromUnixNano(at)
		out = append(out, b)
	}
	return out, rows.Err()
}

// CommitBatch writes, in one transaction, an accepted batch with its games,
// the test's new SPRT state, the job's final state (when the test ends) and
// events. The coordinator acknowledges the worker only after it returns nil.
// A second batch with the same unit id fails (primary key): a batch is
// counted once.
func (s *Store) CommitBatch(ctx context.Context, b *Batch, pgns []string, sprtState string, job *JobChange, events []Event) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		return commitBatch(ctx, tx, b, pgns, sprtState, job, events)
	})
}

func commitBatch(ctx context.Context, tx *sql.Tx, b *Batch, pgns []string, sprtState string, job *JobChange, events []Event) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO batches(unit_id,job_id,idx,worker_id,pairs,penta,wins,draws,losses,incidents,leased_at,at,elapsed_ms)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)`, b.UnitID, b.JobID, b.Idx, b.WorkerID, b.Pairs, encodePenta(b.Penta),
		b.Wins, b.Draws, b.Losses, b.Incidents, UnixNano(b.LeasedAt), UnixNano(b.At), b.ElapsedMS); err != nil {
		return fmt.Errorf("store: insert batch: %w", err)
	}
	if err := insertPGNs(ctx, tx, b.JobID, b.Idx, pgns); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE tests SET sprt=? WHERE job_id=?", sprtState, b.JobID); err != nil {
		return fmt.Errorf("store: update test: %w", err)
	}
	if job != nil {
		if err := setJobState(ctx, tx, b.JobID, job); err != nil {
			return err
		}
	}
	return insertEvents(ctx, tx, events)
}

// insertPGNs stores the games of batch idx of a job, in game order,
// gzip-compressed.
func insertPGNs(ctx context.Context, tx *sql.Tx, jobID string, idx int, pgns []string) error {
	st, err := tx.PrepareContext(ctx, "INSERT INTO pgns(job_id,batch_idx,game,pgn,gz) VALUES(?,?,?,?,1)")
	if err != nil {
		return err
	}
	defer st.Close()
	var z compressor
	for i, p := range pgns {
		b, err := z.compress(p)
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, jobID, idx, i, b); err != nil {
			return fmt.Errorf("store: insert pgn: %w", err)
		}
	}
	return nil
}

func insertEvents(ctx context.Context, tx *sql.Tx, events []Event) error {
	for _, e := range events {
		if _, err := tx.ExecContext(ctx, "INSERT INTO events(job_id,unit_id,worker_id,kind,detail,at) VALUES(?,?,?,?,?,?)",
			e.JobID, e.UnitID, e.WorkerID, e.Kind, e.Detail, UnixNano(e.At)); err != nil {
			return fmt.Errorf("store: insert event: %w", err)
		}
	}
	return nil
}

// AddEvents records events on their own (a worker refusing a test).
func (s *Store) AddEvents(ctx context.Context, events []Event) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error { return insertEvents(ctx, tx, events) })
}

// PGNs calls fn with every stored game of a test, by batch index then game.
// It reads pages of games and calls fn between reads, so a slow reader never
// holds the database (it has one connection) while fn runs.
func (s *Store) PGNs(ctx context.Context, jobID string, fn func(pgn string) error) error {
	lastBatch, lastGame := -1, -1
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT batch_idx, game, pgn, gz FROM pgns WHERE job_id=? AND (batch_idx > ? OR (batch_idx = ? AND game > ?))
			ORDER BY batch_idx, game LIMIT 256`, jobID, lastBatch, lastBatch, lastGame)
		if err != nil {
			return err
		}
		var page []string
		for rows.Next() {
			var raw []byte
			var gz int
			if err := rows.Scan(&lastBatch, &lastGame, &raw, &gz); err != nil {
				rows.Close()
				return err
			}
			p, err := pgnText(raw, gz)
			if err != nil {
				rows.Close()
				return fmt.Errorf("store: game %d of batch %d: %w", lastGame, lastBatch, err)
			}
			page = append(page, p)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		for _, p := range page {
			if err := fn(p); err != nil {
				return err
			}
		}
	}
}

// PGN returns one stored game of a test by batch and game index.
func (s *Store) PGN(ctx context.Context, jobID string, batch, game int) (string, error) {
	var raw []byte
	var gz int
	err := s.db.QueryRowContext(ctx, "SELECT pgn, gz FROM pgns WHERE job_id=? AND batch_idx=? AND game=?", jobID, batch, game).Scan(&raw, &gz)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: game %d of batch %d of %s: %w", game, batch, jobID, ErrNotFound)
	}
	if err != nil {
		return "", err
	}
	return pgnText(raw, gz)
}

// GameTable names a table of jobs whose games ExpireGames deletes: a row
// per job (job_id) with its pgns_expired_at.
type GameTable string

// TestGames is the tests' table (a kind's own table registers its name
// with RegisterGameTable).
const TestGames GameTable = "tests"

var (
	gameTablesMu sync.Mutex
	gameTables   = map[GameTable]bool{TestGames: true}
)

// RegisterGameTable declares a kind's table of jobs with games (made by
// its schema, with job_id and pgns_expired_at columns), from the kind's
// init. ExpireGames takes no other name: the name goes into its SQL.
func RegisterGameTable(t GameTable) {
	gameTablesMu.Lock()
	defer gameTablesMu.Unlock()
	gameTables[t] = true
}

// ExpireGames deletes the games of the jobs of the tables given that
// finished before cutoff (the retention setting), in one transaction,
// and returns their ids. Their counts, verdict, updates and per-worker
// figures stay.
func (s *Store) ExpireGames(ctx context.Context, cutoff, now time.Time, tables ...GameTable) ([]string, error) {
	gameTablesMu.Lock()
	for _, t := range tables {
		if !gameTables[t] {
			gameTablesMu.Unlock()
			return nil, fmt.Errorf("store: %q is no table of jobs with games", t)
		}
	}
	gameTablesMu.Unlock()
	var ids []string
	err := s.write(func(ctx context.Context, tx *sql.Tx) error {
		ids = ids[:0]
		for _, t := range tables {
			// table is a registered name (checked), never input.
			table := string(t)
			rows, err := tx.QueryContext(ctx, `SELECT t.job_id FROM `+table+` t JOIN jobs j ON j.id = t.job_id
				WHERE t.pgns_expired_at = 0 AND j.state != 'running' AND j.finished_at > 0 AND j.finished_at < ?`, UnixNano(cutoff))
			if err != nil {
				return err
			}
			var found []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				found = append(found, id)
			}
			rows.Close()
			for _, id := range found {
				if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET pgns_expired_at=? WHERE job_id=?", UnixNano(now), id); err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, "DELETE FROM pgns WHERE job_id=?", id); err != nil {
					return err
				}
			}
			ids = append(ids, found...)
		}
		return nil
	})
	return ids, err
}

// compressor gzips games one after another with one writer: a gzip
// writer's state is most of a megabyte, too much to allocate per game.
type compressor struct {
	buf bytes.Buffer
	zw  *gzip.Writer
}

// compress returns pgn gzip-compressed, valid until the next call.
func (c *compressor) compress(pgn string) ([]byte, error) {
	c.buf.Reset()
	if c.zw == nil {
		zw, err := gzip.NewWriterLevel(&c.buf, gzip.BestSpeed)
		if err != nil {
			return nil, err
		}
		c.zw = zw
	} else {
		c.zw.Reset(&c.buf)
	}
	c.zw.Write([]byte(pgn))
	if err := c.zw.Close(); err != nil {
		return nil, err
	}
	return c.buf.Bytes(), nil
}

// pgnText decodes a stored game: gzip-compressed (gz 1) or plain text.
func pgnText(raw []byte, gz int) (string, error) {
	if gz == 0 {
		return string(raw), nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	// A stored game is at most 1 MiB (the coordinator refuses larger).
	b, err := io.ReadAll(io.LimitReader(zr, 4<<20))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// CountPGNs returns how many games of a test are stored.
func (s *Store) CountPGNs(ctx context.Context, jobID string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM pgns WHERE job_id=?", jobID).Scan(&n)
	return n, err
}

// SetTestPriority changes a test's priority and throughput share: the job's
// row, and the stored spec, which edit rewrites (the store does not read
// specs), in one transaction.
func (s *Store) SetTestPriority(ctx context.Context, jobID string, priority int32, throughput float64, edit func(spec []byte) ([]byte, error)) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		var spec []byte
		err := tx.QueryRowContext(ctx, "SELECT spec FROM tests WHERE job_id=?", jobID).Scan(&spec)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: test %s: %w", jobID, ErrNotFound)
		}
		if err != nil {
			return err
		}
		if spec, err = edit(spec); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "UPDATE tests SET spec=? WHERE job_id=?", spec, jobID); err != nil {
			return fmt.Errorf("store: update test: %w", err)
		}
		return setPriority(ctx, tx, jobID, priority, throughput)
	})
}

// SetJobPriority changes a job's priority and throughput share.
func (s *Store) SetJobPriority(ctx context.Context, jobID string, priority int32, throughput float64) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error { return setPriority(ctx, tx, jobID, priority, throughput) })
}

func setPriority(ctx context.Context, tx *sql.Tx, jobID string, priority int32, throughput float64) error {
	res, err := tx.ExecContext(ctx, "UPDATE jobs SET priority=?, throughput=? WHERE id=?", priority, throughput, jobID)
	if err != nil {
		return fmt.Errorf("store: update job: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("store: job %s: %w", jobID, ErrNotFound)
	}
	return nil
}
