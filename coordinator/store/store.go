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
// The store knows nothing of chess: positions are FEN strings and counts are
// exact 128-bit integers (engine.Count, a plain number type).
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/arbiter-chess/arbiter/engine"

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

// RootMult says a position occurs N times below root move Root.
type RootMult struct {
	Root int
	N    uint64
}

// Position is one unique position of a perft job at the split ply.
type Position struct {
	FEN  string
	Mult []RootMult
}

// Unit is one leasable batch of consecutive positions [First, End).
type Unit struct {
	ID     string
	JobID  string
	Idx    int
	First  int
	End    int
	Verify bool
	// Slice is the slice of its positions' trees the unit counts (of the
	// job's Slices).
	Slice int
	// CrossCheck: the unit is recomputed by the job's cross-check program.
	CrossCheck bool
	Settled    bool
	Counts     []engine.Count // settled counts
}

// Run is one worker's result for one unit.
type Run struct {
	UnitID   string
	WorkerID string
	Owner    string // the worker's identity ("" before identities)
	// Program is the cross-check program that counted (its node counts
	// only, one per position); "" for the embedded generator.
	Program   string
	Counts    []engine.Count
	At        time.Time
	ElapsedMS int64
}

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

// EncodeCounts renders counts as comma-separated decimals (exact 128-bit
// integers).
func EncodeCounts(c []engine.Count) string {
	var b strings.Builder
	for i, v := range c {
		if i > 0 {
			b.WriteByte(',')
		}
		if v.IsUint64() {
			b.WriteString(strconv.FormatUint(v.Lo, 10))
		} else {
			b.WriteString(v.String())
		}
	}
	return b.String()
}

// DecodeCounts parses EncodeCounts' output.
func DecodeCounts(s string) ([]engine.Count, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]engine.Count, len(parts))
	for i, p := range parts {
		if v, err := strconv.ParseUint(p, 10, 64); err == nil {
			out[i] = engine.CountOf(v)
			continue
		}
		v, ok := engine.ParseCount(p)
		if !ok {
			return nil, fmt.Errorf("store: bad count %q", p)
		}
		out[i] = v
	}
	return out, nil
}

func encodeMult(m []RootMult) string {
	var b strings.Builder
	for i, r := range m {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(strconv.Itoa(r.Root))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(r.N, 10))
	}
	return b.String()
}

func decodeMult(s string) ([]RootMult, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ";")
	out := make([]RootMult, len(parts))
	for i, p := range parts {
		r, n, ok := strings.Cut(p, ":")
		if !ok {
			return nil, fmt.Errorf("store: bad multiplicity %q", p)
		}
		ri, err1 := strconv.Atoi(r)
		ni, err2 := strconv.ParseUint(n, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("store: bad multiplicity %q", p)
		}
		out[i] = RootMult{Root: ri, N: ni}
	}
	return out, nil
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

// CreateJob stores a job with its positions and units in one transaction:
// after a crash either all of it exists or none.
func (s *Store) CreateJob(ctx context.Context, j *Job, positions []Position, units []Unit) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error { return createJob(ctx, tx, j, positions, units) })
}

func createJob(ctx context.Context, tx *sql.Tx, j *Job, positions []Position, units []Unit) error {
	if err := numberJob(ctx, tx, j); err != nil {
		return err
	}
	roots, _ := json.Marshal(j.RootMoves)
	divide, _ := json.Marshal(j.Divide)
	if j.Divide == nil {
		divide = []byte("")
	}
	if err := insertJob(ctx, tx, j, string(roots), string(divide)); err != nil {
		return err
	}
	if err := insertRows(ctx, tx, "INSERT INTO positions(job_id,idx,fen,mult) VALUES", 4, len(positions), func(i int, args []any) []any {
		return append(args, j.ID, i, positions[i].FEN, encodeMult(positions[i].Mult))
	}); err != nil {
		return fmt.Errorf("store: insert position: %w", err)
	}
	if err := insertRows(ctx, tx, "INSERT INTO units(id,job_id,idx,first_pos,end_pos,verify,slice,cross_check) VALUES", 8, len(units), func(i int, args []any) []any {
		u := units[i]
		return append(args, u.ID, j.ID, u.Idx, u.First, u.End, boolInt(u.Verify), u.Slice, boolInt(u.CrossCheck))
	}); err != nil {
		return fmt.Errorf("store: insert unit: %w", err)
	}
	return nil
}

// rowsPerInsert is the rows of one multi-row INSERT: a statement per row
// is a round trip per row to PostgreSQL (a perft job has tens of
// thousands), and both databases bound a statement's parameters (SQLite
// 32766, PostgreSQL 65535).
const rowsPerInsert = 256

// insertRows inserts n rows of cols values each, args(i) appending row
// i's, with head ("INSERT INTO t(a,b) VALUES") in statements of up to
// rowsPerInsert rows.
func insertRows(ctx context.Context, tx *sql.Tx, head string, cols, n int, args func(i int, args []any) []any) error {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	full := head + strings.TrimSuffix(strings.Repeat(one+",", rowsPerInsert), ",")
	var st *sql.Stmt
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	buf := make([]any, 0, cols*rowsPerInsert)
	for first := 0; first < n; first += rowsPerInsert {
		k := min(rowsPerInsert, n-first)
		buf = buf[:0]
		for i := first; i < first+k; i++ {
			buf = args(i, buf)
		}
		if k < rowsPerInsert {
			_, err := tx.ExecContext(ctx, head+strings.TrimSuffix(strings.Repeat(one+",", k), ","), buf...)
			return err
		}
		if st == nil {
			var err error
			if st, err = tx.PrepareContext(ctx, full); err != nil {
				return err
			}
		}
		if _, err := st.ExecContext(ctx, buf...); err != nil {
			return err
		}
	}
	return nil
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

// Positions returns a job's positions in index order.
func (s *Store) Positions(ctx context.Context, jobID string) ([]Position, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT fen, mult FROM positions WHERE job_id=? ORDER BY idx", jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Position
	for rows.Next() {
		var p Position
		var m string
		if err := rows.Scan(&p.FEN, &m); err != nil {
			return nil, err
		}
		if p.Mult, err = decodeMult(m); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Units returns a job's units in index order.
func (s *Store) Units(ctx context.Context, jobID string) ([]Unit, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, idx, first_pos, end_pos, verify, slice, cross_check, settled, counts FROM units WHERE job_id=? ORDER BY idx", jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Unit
	for rows.Next() {
		u := Unit{JobID: jobID}
		var verify, cross, settled int
		var counts string
		if err := rows.Scan(&u.ID, &u.Idx, &u.First, &u.End, &verify, &u.Slice, &cross, &settled, &counts); err != nil {
			return nil, err
		}
		u.Verify, u.CrossCheck, u.Settled = verify != 0, cross != 0, settled != 0
		if u.Counts, err = DecodeCounts(counts); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// Runs returns every run of a job's units, oldest first.
func (s *Store) Runs(ctx context.Context, jobID string) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT unit_id, worker_id, owner, program, counts, at, elapsed_ms FROM runs WHERE job_id=? ORDER BY at, rowid", jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var counts string
		var at int64
		if err := rows.Scan(&r.UnitID, &r.WorkerID, &r.Owner, &r.Program, &counts, &at, &r.ElapsedMS); err != nil {
			return nil, err
		}
		r.At = FromUnixNano(at)
		if r.Counts, err = DecodeCounts(counts); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// UnitChange is the new settlement state of a unit, written with a run.
type UnitChange struct {
	Settled bool
	Counts  []engine.Count
}

// JobChange is a job's new final state, written with a run.
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

// Commit writes, in one transaction, an optional run, the unit's new state,
// the job's final state and events. The caller acknowledges the worker only
// after Commit returns nil.
func (s *Store) Commit(ctx context.Context, jobID, unitID string, run *Run, unit *UnitChange, job *JobChange, events []Event) error {
	return <-s.CommitStart(jobID, unitID, run, unit, job, events)
}

// CommitStart queues what Commit writes and returns at once; the channel
// receives the outcome once it is committed. Writes are applied in the
// order they were started, so a caller may decide the next result while
// this one waits for the disk.
func (s *Store) CommitStart(jobID, unitID string, run *Run, unit *UnitChange, job *JobChange, events []Event) <-chan error {
	return s.submit(func(ctx context.Context, tx *sql.Tx) error {
		return commit(ctx, tx, jobID, unitID, run, unit, job, events)
	})
}

func commit(ctx context.Context, tx *sql.Tx, jobID, unitID string, run *Run, unit *UnitChange, job *JobChange, events []Event) error {
	if run != nil {
		if _, err := tx.ExecContext(ctx, "INSERT INTO runs(unit_id,worker_id,owner,program,job_id,counts,at,elapsed_ms) VALUES(?,?,?,?,?,?,?,?)",
			run.UnitID, run.WorkerID, run.Owner, run.Program, jobID, EncodeCounts(run.Counts), UnixNano(run.At), run.ElapsedMS); err != nil {
			return fmt.Errorf("store: insert run: %w", err)
		}
	}
	if unit != nil {
		if _, err := tx.ExecContext(ctx, "UPDATE units SET settled=?, counts=? WHERE id=?",
			boolInt(unit.Settled), EncodeCounts(unit.Counts), unitID); err != nil {
			return fmt.Errorf("store: update unit: %w", err)
		}
	}
	if job != nil {
		if err := setJobState(ctx, tx, jobID, job); err != nil {
			return err
		}
	}
	for _, e := range events {
		if _, err := tx.ExecContext(ctx, "INSERT INTO events(job_id,unit_id,worker_id,kind,detail,at) VALUES(?,?,?,?,?,?)",
			e.JobID, e.UnitID, e.WorkerID, e.Kind, e.Detail, UnixNano(e.At)); err != nil {
			return fmt.Errorf("store: insert event: %w", err)
		}
	}
	return nil
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
	return s.Commit(ctx, jobID, "", nil, nil, job, nil)
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
