package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// The games of jobs that play them (tests, tunes): pgns, one row per
// game keyed by job, batch index and game index, gzip-compressed (gz 1)
// or plain text (gz 0: rows of the first releases). Their kinds keep
// their own rows (kinds/test: tests, batches; kinds/spsa: tunes,
// tune_updates) and write games with FinishUnitTx in their transactions;
// the retention setting deletes the games of the finished jobs of a
// kind's registered table (RegisterGameTable, ExpireGames).

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

var (
	gameTablesMu sync.Mutex
	gameTables   = map[GameTable]bool{}
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

// DeleteGamesTx deletes the games of the batches of a job given, inside
// a kind's transaction (a purge's).
func DeleteGamesTx(ctx context.Context, tx *sql.Tx, jobID string, batches []int) error {
	for _, idx := range batches {
		if _, err := tx.ExecContext(ctx, "DELETE FROM pgns WHERE job_id=? AND batch_idx=?", jobID, idx); err != nil {
			return err
		}
	}
	return nil
}

// CountPGNs returns how many games of a job are stored.
func (s *Store) CountPGNs(ctx context.Context, jobID string) (int64, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM pgns WHERE job_id=?", jobID).Scan(&n)
	return n, err
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
