package datagen

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/coordinator/store"
)

// schema is the workload's tables: a row per job (its spec) and a row per
// accepted shard. A shard's games are a file named by its SHA-256 under
// DATA/datagen/.
var schema = store.KindSchema{Kind: Kind, Migrations: []store.Migration{
	{Name: "datagen jobs and shards", Up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
CREATE TABLE datagen_jobs (
  job_id TEXT PRIMARY KEY,
  spec BLOB NOT NULL,
  batch_games INTEGER NOT NULL
);
CREATE TABLE datagen_shards (
  job_id TEXT NOT NULL,
  batch INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  unit_id TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  games INTEGER NOT NULL,
  records INTEGER NOT NULL,
  positions INTEGER NOT NULL,
  take INTEGER NOT NULL,
  dropped TEXT NOT NULL DEFAULT '',
  stats TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  elapsed_ms INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (job_id, batch)
) WITHOUT ROWID;
CREATE UNIQUE INDEX datagen_shards_seq ON datagen_shards(job_id, seq);
`)
		return err
	}},
	{Name: "retention: when a finished dataset's shards were deleted", Up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "ALTER TABLE datagen_jobs ADD COLUMN shards_expired_at INTEGER NOT NULL DEFAULT 0")
		return err
	}},
}, Postgres: []store.Migration{
	{Name: "datagen jobs and shards", Up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `
CREATE TABLE datagen_jobs (
  job_id TEXT PRIMARY KEY,
  spec BYTEA NOT NULL,
  batch_games BIGINT NOT NULL
);
CREATE TABLE datagen_shards (
  job_id TEXT NOT NULL,
  batch BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  unit_id TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  games BIGINT NOT NULL,
  records BIGINT NOT NULL,
  positions BIGINT NOT NULL,
  take BIGINT NOT NULL,
  dropped TEXT NOT NULL DEFAULT '',
  stats TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  elapsed_ms BIGINT NOT NULL,
  at BIGINT NOT NULL,
  PRIMARY KEY (job_id, batch)
);
CREATE UNIQUE INDEX datagen_shards_seq ON datagen_shards(job_id, seq);
`)
		return err
	}},
	{Name: "retention: when a finished dataset's shards were deleted", Up: func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "ALTER TABLE datagen_jobs ADD COLUMN shards_expired_at BIGINT NOT NULL DEFAULT 0")
		return err
	}},
}}

// shardRow is one accepted shard.
type shardRow struct {
	JobID     string
	Batch     uint64
	Seq       int64 // acceptance order within the job, from 0
	UnitID    string
	SHA256    string
	Bytes     int64
	Games     int
	Records   int    // records the filters keep
	Positions uint64 // records counted: without dropped duplicates, cut by take
	Take      uint64 // records of the shard (after dropping) that count
	Dropped   []uint32
	Stats     shardStats
	WorkerID  string
	ElapsedMS int64
	At        time.Time
}

// shardStats is what a shard adds to a job's progress.
type shardStats struct {
	// Games whose records count (a pull holds these); the shard's row
	// has all it played.
	Games      uint64   `json:"games"`
	WhiteWins  uint64   `json:"white_wins"`
	Draws      uint64   `json:"draws"`
	BlackWins  uint64   `json:"black_wins"`
	Plies      uint64   `json:"plies"`
	Duplicates uint64   `json:"duplicates"`
	Score      []uint64 `json:"score"`
	Length     []uint64 `json:"length"`
	Pieces     []uint64 `json:"pieces"`
}

func createJob(ctx context.Context, st *store.Store, rec *store.Job, spec []byte, batchGames int) error {
	return st.CreateKindJob(ctx, rec, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO datagen_jobs(job_id,spec,batch_games) VALUES(?,?,?)", rec.ID, spec, batchGames)
		return err
	})
}

func loadJobRow(ctx context.Context, st *store.Store, jobID string) (spec []byte, batchGames int, err error) {
	err = st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		return db.QueryRowContext(ctx, "SELECT spec, batch_games FROM datagen_jobs WHERE job_id=?", jobID).Scan(&spec, &batchGames)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, fmt.Errorf("no datagen row")
	}
	return spec, batchGames, err
}

const shardColumns = "job_id,batch,seq,unit_id,sha256,bytes,games,records,positions,take,dropped,stats,worker_id,elapsed_ms,at"

// commitShard stores a shard's row and, when it ends the job, the job's
// final state, in one transaction.
func commitShard(ctx context.Context, st *store.Store, r *shardRow, done *store.JobChange) error {
	dropped, _ := json.Marshal(r.Dropped)
	stats, _ := json.Marshal(r.Stats)
	return st.Write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO datagen_shards("+shardColumns+") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			r.JobID, int64(r.Batch), r.Seq, r.UnitID, r.SHA256, r.Bytes, r.Games, r.Records, int64(r.Positions), int64(r.Take),
			string(dropped), string(stats), r.WorkerID, r.ElapsedMS, r.At.UnixNano()); err != nil {
			return fmt.Errorf("store: insert shard: %w", err)
		}
		if done != nil {
			return store.SetJobStateTx(ctx, tx, r.JobID, done)
		}
		return nil
	})
}

// loadShards returns a job's shards in acceptance order.
// limit 0 reads every row from from on.
func loadShards(ctx context.Context, st *store.Store, jobID string, from int64, limit int) ([]shardRow, error) {
	if limit <= 0 {
		limit = math.MaxInt64 // no limit, in words both SQLite and PostgreSQL take
	}
	var out []shardRow
	err := st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT "+shardColumns+" FROM datagen_shards WHERE job_id=? AND seq>=? ORDER BY seq LIMIT ?", jobID, from, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r shardRow
			var batch, positions, take, at int64
			var dropped, stats string
			if err := rows.Scan(&r.JobID, &batch, &r.Seq, &r.UnitID, &r.SHA256, &r.Bytes, &r.Games, &r.Records, &positions, &take,
				&dropped, &stats, &r.WorkerID, &r.ElapsedMS, &at); err != nil {
				return err
			}
			if batch < 0 || positions < 0 || take < 0 {
				return fmt.Errorf("shard %d of %s: negative counts", r.Seq, jobID)
			}
			r.Batch, r.Positions, r.Take, r.At = uint64(batch), uint64(positions), uint64(take), time.Unix(0, at)
			if dropped != "" {
				if err := json.Unmarshal([]byte(dropped), &r.Dropped); err != nil {
					return fmt.Errorf("shard %d of %s: dropped: %w", r.Seq, jobID, err)
				}
			}
			if err := json.Unmarshal([]byte(stats), &r.Stats); err != nil {
				return fmt.Errorf("shard %d of %s: stats: %w", r.Seq, jobID, err)
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}

// referencedShards is every shard file a row names.
func referencedShards(ctx context.Context, st *store.Store) (map[string]bool, error) {
	out := make(map[string]bool)
	err := st.Read(ctx, func(ctx context.Context, db *sql.DB) error {
		rows, err := db.QueryContext(ctx, "SELECT DISTINCT sha256 FROM datagen_shards")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err
			}
			out[s] = true
		}
		return rows.Err()
	})
	return out, err
}

// shardPath is where a shard's bytes live.
func (w *Workload) shardPath(sha string) string { return filepath.Join(w.dir, sha+".shard") }

// writeShard stores data under its SHA-256 (once: the same shard again is
// the same file) and returns the hash. The file is complete and synced
// before it has its name.
func (w *Workload) writeShard(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	path := w.shardPath(sha)
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(data)) {
		return sha, nil
	}
	tmp, err := os.CreateTemp(w.dir, "incoming-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	if d, err := os.Open(w.dir); err == nil {
		d.Sync()
		d.Close()
	}
	return sha, nil
}

// readShard reads a stored shard and checks its hash.
func (w *Workload) readShard(sha string) ([]byte, error) {
	data, err := os.ReadFile(w.shardPath(sha))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != sha {
		return nil, fmt.Errorf("shard %s: content does not match its hash (the file is damaged)", sha[:12])
	}
	return data, nil
}

// sweep removes shard files no row names: files of shards whose row was
// never committed (a crash between file and row), and leftovers of
// writes cut short.
func (w *Workload) sweep(ctx context.Context) {
	refs, err := referencedShards(ctx, w.store)
	if err != nil {
		w.log.Warn("datagen: shard sweep skipped", zap.Error(err))
		return
	}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		sha, isShard := strings.CutSuffix(name, ".shard")
		if (isShard && !refs[sha]) || strings.HasPrefix(name, "incoming-") {
			os.Remove(filepath.Join(w.dir, name))
		}
	}
}
