package store

// Engine artifacts: the metadata of the binaries and source trees that
// travel to the workers (their bytes are files under the data directory,
// kept by package artifacts), and what each worker did with each artifact
// of a test.

import (
	"context"
	"database/sql"
	"time"
)

func migrateArtifacts(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
CREATE TABLE IF NOT EXISTS artifacts (
  sha256 TEXT PRIMARY KEY,
  kind INTEGER NOT NULL,
  size INTEGER NOT NULL,
  name TEXT NOT NULL,
  uploader TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  platform TEXT NOT NULL,
  build TEXT NOT NULL,
  exe TEXT NOT NULL,
  bench INTEGER NOT NULL,
  repository TEXT NOT NULL,
  branch TEXT NOT NULL,
  commit_id TEXT NOT NULL,
  message TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS artifact_checks (
  job_id TEXT NOT NULL,
  worker_id TEXT NOT NULL,
  engine TEXT NOT NULL,
  worker_name TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  state INTEGER NOT NULL,
  detail TEXT NOT NULL,
  log TEXT NOT NULL,
  bench INTEGER NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (job_id, worker_id, engine)
) WITHOUT ROWID;
`)
	return err
}

// migrateNets adds what nets need: the engine a net is for, and each
// engine's default net.
func migrateNets(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
ALTER TABLE artifacts ADD COLUMN engine TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS default_nets (
  engine TEXT PRIMARY KEY,
  sha256 TEXT NOT NULL
) WITHOUT ROWID;
`)
	return err
}

// Dir is the data directory: the SQLite file's, and where files beside
// the database live (artifacts, datagen shards) on either backend.
func (s *Store) Dir() string { return s.dir }

// Artifact is one stored artifact's metadata.
type Artifact struct {
	SHA256     string
	Kind       int32
	Size       int64
	Name       string
	Uploader   string
	CreatedAt  time.Time
	Platform   string
	Build      string
	Exe        string
	Bench      uint64
	Repository string
	Branch     string
	Commit     string
	Message    string
	// Engine is, for a net, the engine it is for ("" when not named).
	Engine string
}

const artifactColumns = `sha256, kind, size, name, uploader, created_at, platform, build, exe, bench, repository, branch, commit_id, message, engine`

func scanArtifact(sc interface{ Scan(...any) error }) (*Artifact, error) {
	var a Artifact
	var at int64
	var bench int64
	if err := sc.Scan(&a.SHA256, &a.Kind, &a.Size, &a.Name, &a.Uploader, &at, &a.Platform, &a.Build, &a.Exe, &bench,
		&a.Repository, &a.Branch, &a.Commit, &a.Message, &a.Engine); err != nil {
		return nil, err
	}
	a.CreatedAt, a.Bench = FromUnixNano(at), uint64(bench)
	return &a, nil
}

// PutArtifact records an artifact; an artifact already stored with that
// hash stays as it was (the first upload's metadata wins).
func (s *Store) PutArtifact(ctx context.Context, a *Artifact) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO artifacts(`+artifactColumns+`) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(sha256) DO NOTHING`,
			a.SHA256, a.Kind, a.Size, a.Name, a.Uploader, UnixNano(a.CreatedAt), a.Platform, a.Build, a.Exe, int64(a.Bench),
			a.Repository, a.Branch, a.Commit, a.Message, a.Engine)
		return err
	})
}

// Artifacts returns every stored artifact, newest first.
func (s *Store) Artifacts(ctx context.Context) ([]*Artifact, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+artifactColumns+" FROM artifacts ORDER BY created_at DESC, sha256")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Artifact
	for rows.Next() {
		a, err := scanArtifact(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// DeleteArtifact removes an artifact's metadata (ErrNotFound when none).
func (s *Store) DeleteArtifact(ctx context.Context, sha string) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "DELETE FROM artifacts WHERE sha256=?", sha)
		if err != nil {
			return err
		}
		// A removed net is no engine's default any more.
		if _, err := tx.ExecContext(ctx, "DELETE FROM default_nets WHERE sha256=?", sha); err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// SetDefaultNet makes sha the default net of engine, or clears engine's
// default when sha is "".
func (s *Store) SetDefaultNet(ctx context.Context, engine, sha string) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		if sha == "" {
			_, err := tx.ExecContext(ctx, "DELETE FROM default_nets WHERE engine=?", engine)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO default_nets(engine, sha256) VALUES(?,?)
			ON CONFLICT(engine) DO UPDATE SET sha256=excluded.sha256`, engine, sha)
		return err
	})
}

// DefaultNets returns each engine's default net (engine → SHA-256).
func (s *Store) DefaultNets(ctx context.Context) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT engine, sha256 FROM default_nets")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var e, h string
		if err := rows.Scan(&e, &h); err != nil {
			return nil, err
		}
		out[e] = h
	}
	return out, rows.Err()
}

// ArtifactCheck is a worker's latest step with one engine of a test.
type ArtifactCheck struct {
	JobID      string
	WorkerID   string
	WorkerName string
	Engine     string
	SHA256     string
	State      int32
	Detail     string
	Log        string
	Bench      uint64
	At         time.Time
}

// PutArtifactCheck records a worker's step, replacing its earlier one for
// that engine of that test.
func (s *Store) PutArtifactCheck(ctx context.Context, c *ArtifactCheck) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO artifact_checks(job_id, worker_id, engine, worker_name, sha256, state, detail, log, bench, at)
			VALUES(?,?,?,?,?,?,?,?,?,?) ON CONFLICT(job_id, worker_id, engine) DO UPDATE SET worker_name=excluded.worker_name,
			sha256=excluded.sha256, state=excluded.state, detail=excluded.detail, log=excluded.log, bench=excluded.bench, at=excluded.at`,
			c.JobID, c.WorkerID, c.Engine, c.WorkerName, c.SHA256, c.State, c.Detail, c.Log, int64(c.Bench), UnixNano(c.At))
		return err
	})
}

// ArtifactChecks returns the workers' steps with a test's artifacts.
func (s *Store) ArtifactChecks(ctx context.Context, jobID string) ([]ArtifactCheck, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, worker_id, engine, worker_name, sha256, state, detail, log, bench, at
		FROM artifact_checks WHERE job_id=? ORDER BY worker_name, worker_id, engine`, jobID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ArtifactCheck
	for rows.Next() {
		var c ArtifactCheck
		var bench, at int64
		if err := rows.Scan(&c.JobID, &c.WorkerID, &c.Engine, &c.WorkerName, &c.SHA256, &c.State, &c.Detail, &c.Log, &bench, &at); err != nil {
			return nil, err
		}
		c.Bench, c.At = uint64(bench), FromUnixNano(at)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
