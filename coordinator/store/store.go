// Package store keeps the coordinator's durable state in SQLite (the
// embedded default) or PostgreSQL (dialect.go says how the two differ).
//
// Why SQLite (through the pure-Go modernc.org/sqlite driver) rather than
// bbolt: jobs, units and runs are relational (a unit has runs, a job has
// units), the coordinator needs a few indexed look-ups and aggregate queries,
// and an operator can inspect the file with the sqlite3 shell. The database
// runs in WAL mode with synchronous=FULL, so a committed transaction survives
// SIGKILL and power loss; every result is committed before the coordinator
// acknowledges it.
//
// The store knows nothing of chess. Every kind's job is a row of jobs (Job,
// with the perft columns among them); a kind's own rows are in its own
// tables, which it registers and versions (kinds.go): a perft job's
// positions, units and runs are kinds/perft's (kinds/perft/store.go).
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Job states as stored.
const (
	StateRunning   = "running"
	StateDone      = "done"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// ErrNotFound is returned for an unknown job.
var ErrNotFound = errors.New("not found")

// Store is an open coordinator database.
type Store struct {
	db      *sql.DB
	path    string // the SQLite file, or the PostgreSQL URL without its password
	dir     string // the data directory: files beside the database (artifacts, shards)
	backend Backend
	w       *writer
	// pgConfig is the PostgreSQL connection's settings (nil for SQLite).
	pgConfig *pgx.ConnConfig
	// fence is the leader term every write checks (0: none; leader.go).
	fence atomic.Int64
	// fenceIdle is the idle-in-transaction timeout of fenced writes, ms.
	fenceIdle atomic.Int64
}

// Job is one job's row.
type Job struct {
	ID         string
	Seq        int64
	Kind       string // "perft"
	FEN        string
	Depth      int
	SplitPly   int
	Verify     float64
	Chess960   bool
	State      string
	Error      string
	CreatedAt  time.Time
	FinishedAt time.Time // zero while running
	RootMoves  []string
	UnitsTotal int
	Positions  int
	Total      string   // decimal, set when done
	Divide     []string // decimal per root move, set when done
	Submitter  string   // identity that submitted it ("" before identities)
	Priority   int32
	Throughput float64 // share weight; 0 reads as 1
	// Summary of a finished perft job (units settled, verified, disputed,
	// disputes resolved); -1 when not recorded.
	Settled, Verified, Disputed, Resolved int
	// Stats: the job counts the perft statistics as well; its runs and
	// settled units then hold, per position, the node count followed by
	// the eight statistics (engine.PerftStatsCount's order).
	Stats bool
	// StatsTotal holds the eight statistics' totals (decimal) once done.
	StatsTotal []string
	// Slices is the number of slices each position's tree is cut into
	// (engine.PerftSlice; 1: none), SlicePly the key ply of the cut below
	// the split positions.
	Slices, SlicePly int
	// CrossCheck is the program (a workers' --verify-engine name) that
	// recomputes a sampled share CrossCheckFraction of the units, chosen
	// with CrossCheckSeed (hex; never sent to a worker); "" for none.
	CrossCheck         string
	CrossCheckFraction float64
	CrossCheckSeed     string
	// SuiteFirst is the number of a suite's first position. A perft job
	// over a suite has no FEN: its RootMoves are the suite's FENs,
	// numbered on from SuiteFirst, and Divide their counts.
	SuiteFirst int
}

// IsSuite reports whether j is a perft job over a suite of positions.
func (j *Job) IsSuite() bool { return j.Kind == "perft" && j.FEN == "" }

// Worker is a registered worker.
type Worker struct {
	ID           string
	Name         string
	Owner        string // the identity that registered it ("" before identities)
	Capabilities string // JSON
	RegisteredAt time.Time
}

// Close closes the database.
func (s *Store) Close() error {
	s.stopWriter()
	return s.db.Close()
}

// UnixNano is how the store keeps a time: nanoseconds since 1970, and 0
// for the zero time (so that a column's default means "never").
func UnixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromUnixNano reads a time UnixNano wrote.
func FromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// numberJob gives job j its submission number inside the transaction that
// creates it.
func numberJob(ctx context.Context, tx *sql.Tx, j *Job) error {
	return tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq),0)+1 FROM jobs").Scan(&j.Seq)
}

// CreateJob stores a job's row (numbered like every job, with its root
// moves and divide) and the rows fn adds in one transaction: after a
// crash either all of it exists or none. A perft job's positions and
// units are its fn's (kinds/perft).
func (s *Store) CreateJob(ctx context.Context, j *Job, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		if err := numberJob(ctx, tx, j); err != nil {
			return err
		}
		roots, _ := json.Marshal(j.RootMoves)
		if err := insertJob(ctx, tx, j, string(roots), encodeStrings(j.Divide)); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// WriteStart queues fn for the store's next group commit, as Write does,
// and returns at once; the channel receives fn's outcome once it is on
// disk (or rolled back). Writes are applied in the order they were
// started, so a caller may decide the next result while this one waits
// for the disk (a perft result, kinds/perft).
func (s *Store) WriteStart(fn func(ctx context.Context, tx *sql.Tx) error) <-chan error {
	return s.submit(fn)
}

// AddColumnTx adds a column to a SQLite table unless it has it: a kind's
// step that adopts a table of an earlier release completes its shape
// (PostgreSQL says ADD COLUMN IF NOT EXISTS). Table, column and decl are
// the kind's constants, never input.
func AddColumnTx(ctx context.Context, tx *sql.Tx, table, column, decl string) error {
	return addColumn(ctx, tx, table, column, decl)
}

// insertJob writes a job's row.
func insertJob(ctx context.Context, tx *sql.Tx, j *Job, roots, divide string) error {
	throughput := j.Throughput
	if throughput == 0 {
		throughput = 1
	}
	slices := max(j.Slices, 1)
	_, err := tx.ExecContext(ctx, `INSERT INTO jobs(`+jobColumns+`)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		j.ID, j.Seq, j.Kind, j.FEN, j.Depth, j.SplitPly, j.Verify, boolInt(j.Chess960), j.State, j.Error,
		UnixNano(j.CreatedAt), UnixNano(j.FinishedAt), roots, j.UnitsTotal, j.Positions, j.Total, divide,
		j.Submitter, j.Priority, throughput, j.Settled, j.Verified, j.Disputed, j.Resolved,
		boolInt(j.Stats), encodeStrings(j.StatsTotal), slices, j.SlicePly,
		j.CrossCheck, j.CrossCheckFraction, j.CrossCheckSeed, j.SuiteFirst)
	if err != nil {
		return fmt.Errorf("store: insert job: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

const jobColumns = `id,seq,kind,fen,depth,split_ply,verify,chess960,state,error,created_at,finished_at,root_moves,units_total,positions,total,divide,submitter,priority,throughput,units_done,units_verified,mismatches,mismatches_settled,stats,stats_total,slices,slice_ply,cross_check,cross_check_fraction,cross_check_seed,suite_first`

// encodeStrings renders decimals as a JSON array ("" for none).
func encodeStrings(v []string) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func scanJob(sc interface{ Scan(...any) error }) (*Job, error) {
	var j Job
	var c960, stats int
	var created, finished int64
	var roots, divide, statsTotal string
	if err := sc.Scan(&j.ID, &j.Seq, &j.Kind, &j.FEN, &j.Depth, &j.SplitPly, &j.Verify, &c960, &j.State, &j.Error,
		&created, &finished, &roots, &j.UnitsTotal, &j.Positions, &j.Total, &divide, &j.Submitter, &j.Priority, &j.Throughput, &j.Settled, &j.Verified, &j.Disputed, &j.Resolved,
		&stats, &statsTotal, &j.Slices, &j.SlicePly, &j.CrossCheck, &j.CrossCheckFraction, &j.CrossCheckSeed, &j.SuiteFirst); err != nil {
		return nil, err
	}
	j.Chess960, j.Stats = c960 != 0, stats != 0
	if statsTotal != "" {
		if err := json.Unmarshal([]byte(statsTotal), &j.StatsTotal); err != nil {
			return nil, fmt.Errorf("store: job %s statistics: %w", j.ID, err)
		}
	}
	j.CreatedAt, j.FinishedAt = FromUnixNano(created), FromUnixNano(finished)
	if err := json.Unmarshal([]byte(roots), &j.RootMoves); err != nil {
		return nil, fmt.Errorf("store: job %s root moves: %w", j.ID, err)
	}
	if divide != "" {
		if err := json.Unmarshal([]byte(divide), &j.Divide); err != nil {
			return nil, fmt.Errorf("store: job %s divide: %w", j.ID, err)
		}
	}
	return &j, nil
}

// Jobs returns every job in submission order.
func (s *Store) Jobs(ctx context.Context) ([]*Job, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+jobColumns+" FROM jobs ORDER BY seq")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// JobChange is a job's new final state, written with a kind's result
// (SetJobStateTx) or on its own (SetJobState).
type JobChange struct {
	State      string
	Error      string
	FinishedAt time.Time
	Total      string
	Divide     []string
	// StatsTotal holds a statistics perft job's eight totals when done.
	StatsTotal []string
	// Settled, Verified, Disputed and Resolved units of a perft job (0
	// otherwise).
	Settled, Verified, Disputed, Resolved int
}

// Event is something an operator should know about (a mismatch).
type Event struct {
	JobID, UnitID, WorkerID, Kind, Detail string
	At                                    time.Time
}

func setJobState(ctx context.Context, tx *sql.Tx, jobID string, job *JobChange) error {
	divide := ""
	if job.Divide != nil {
		b, _ := json.Marshal(job.Divide)
		divide = string(b)
	}
	res, err := tx.ExecContext(ctx, `UPDATE jobs SET state=?, error=?, finished_at=?, total=?, divide=?,
		units_done=?, units_verified=?, mismatches=?, mismatches_settled=?, stats_total=? WHERE id=?`,
		job.State, job.Error, UnixNano(job.FinishedAt), job.Total, divide, job.Settled, job.Verified, job.Disputed, job.Resolved,
		encodeStrings(job.StatsTotal), jobID)
	if err != nil {
		return fmt.Errorf("store: update job: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("store: job %s: %w", jobID, ErrNotFound)
	}
	return nil
}

// SetJobState writes a job's final state on its own (cancel).
func (s *Store) SetJobState(ctx context.Context, jobID string, job *JobChange) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error { return setJobState(ctx, tx, jobID, job) })
}

// Events returns a job's events, oldest first.
func (s *Store) Events(ctx context.Context, jobID string) ([]Event, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT job_id, unit_id, worker_id, kind, detail, at FROM events WHERE job_id=? ORDER BY id", jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at int64
		if err := rows.Scan(&e.JobID, &e.UnitID, &e.WorkerID, &e.Kind, &e.Detail, &at); err != nil {
			return nil, err
		}
		e.At = FromUnixNano(at)
		out = append(out, e)
	}
	return out, rows.Err()
}
