package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// PutWorker records a registered worker, or updates it when it registers
// again (same id).
func (s *Store) PutWorker(ctx context.Context, w Worker) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO workers(id,name,owner,capabilities,registered_at) VALUES(?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET name=excluded.name, owner=excluded.owner, capabilities=excluded.capabilities,
			registered_at=excluded.registered_at`,
			w.ID, w.Name, w.Owner, w.Capabilities, UnixNano(w.RegisteredAt))
		return err
	})
}

// Workers returns every registered worker.
func (s *Store) Workers(ctx context.Context) ([]Worker, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id, name, owner, capabilities, registered_at FROM workers")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Worker
	for rows.Next() {
		var w Worker
		var at int64
		if err := rows.Scan(&w.ID, &w.Name, &w.Owner, &w.Capabilities, &at); err != nil {
			return nil, err
		}
		w.RegisteredAt = FromUnixNano(at)
		out = append(out, w)
	}
	return out, rows.Err()
}

// Meta returns a value of the meta table (nil, nil when absent).
func (s *Store) Meta(ctx context.Context, key string) ([]byte, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key=?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return v, err
}

// PutMeta sets a value of the meta table.
func (s *Store) PutMeta(ctx context.Context, key string, value []byte) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value", key, value)
		return err
	})
}

// PutMetaIfAbsent sets a value of the meta table unless the key has one
// already, and returns the value stored: of several coordinators racing
// to create a shared key, every one gets the same.
func (s *Store) PutMetaIfAbsent(ctx context.Context, key string, value []byte) ([]byte, error) {
	err := s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO meta(key,value) VALUES(?,?) ON CONFLICT(key) DO NOTHING", key, value)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Meta(ctx, key)
}

// Credential is one identity's hashed credential.
type Credential struct {
	Name      string
	Role      string
	Hash      []byte // SHA-256 of the token
	CreatedAt time.Time
	CreatedBy string
	RevokedAt time.Time // zero while valid
	// Owner is the account a token made on its page acts for ("" for a
	// credential of its own, made by an admin).
	Owner string
}

// ErrExists is returned when a name is taken.
var ErrExists = errors.New("already exists")

// AddCredential stores a new credential; a taken name is ErrExists.
func (s *Store) AddCredential(ctx context.Context, c Credential) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error { return addCredential(ctx, tx, c) })
}

func addCredential(ctx context.Context, tx *sql.Tx, c Credential) error {
	var n int
	// An account's name is taken too: see AddUser.
	if err := tx.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM credentials WHERE name=?) + (SELECT COUNT(*) FROM users WHERE name=?)",
		c.Name, c.Name).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return fmt.Errorf("credential %q: %w", c.Name, ErrExists)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO credentials(name,role,hash,created_at,created_by,owner) VALUES(?,?,?,?,?,?)",
		c.Name, c.Role, c.Hash, UnixNano(c.CreatedAt), c.CreatedBy, c.Owner); err != nil {
		return err
	}
	return nil
}

// Credentials returns every credential, revoked ones included, by name.
func (s *Store) Credentials(ctx context.Context) ([]Credential, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name, role, hash, created_at, created_by, revoked_at, owner FROM credentials ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Credential
	for rows.Next() {
		var c Credential
		var created, revoked int64
		if err := rows.Scan(&c.Name, &c.Role, &c.Hash, &created, &c.CreatedBy, &revoked, &c.Owner); err != nil {
			return nil, err
		}
		c.CreatedAt, c.RevokedAt = FromUnixNano(created), FromUnixNano(revoked)
		out = append(out, c)
	}
	return out, rows.Err()
}

// RevokeCredential marks a credential revoked; an unknown or already
// revoked name is ErrNotFound.
func (s *Store) RevokeCredential(ctx context.Context, name string, at time.Time) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE credentials SET revoked_at=? WHERE name=? AND revoked_at=0", UnixNano(at), name)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("credential %q: %w", name, ErrNotFound)
		}
		return nil
	})
}

// Path is the database file's path (SQLite), or the database's URL
// without its password (PostgreSQL).
func (s *Store) Path() string { return s.path }

// ErrNoBackup is Backup's error on a backend it cannot copy.
var ErrNoBackup = errors.New("the store is PostgreSQL: back it up with pg_dump or the database's own backups")

// Backup writes a consistent copy of the database to path (which must not
// exist) while the store stays in use: VACUUM INTO reads one snapshot.
func (s *Store) Backup(ctx context.Context, path string) error {
	if s.backend != SQLite {
		return ErrNoBackup
	}
	// Created empty first, FileMode: VACUUM INTO fills an empty file and
	// keeps its mode (a file it creates is 0644).
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("backup: %s exists", path)
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	_, err = s.db.ExecContext(ctx, "VACUUM INTO ?", path)
	return err
}

// Quarantined is a stored record the coordinator could not load.
type Quarantined struct {
	Kind, ID, Error string
	At              time.Time
}

// Quarantine records that a stored record (a job, a batch) could not be
// loaded and is not served. The record itself stays where it is, untouched,
// for an operator to inspect or repair; recording it again updates the
// error.
func (s *Store) Quarantine(ctx context.Context, q Quarantined) error {
	return s.write(func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO quarantine(kind,id,error,at) VALUES(?,?,?,?)
			ON CONFLICT(kind,id) DO UPDATE SET error=excluded.error, at=excluded.at`, q.Kind, q.ID, q.Error, UnixNano(q.At))
		return err
	})
}

// QuarantineList returns every quarantined record.
func (s *Store) QuarantineList(ctx context.Context) ([]Quarantined, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT kind, id, error, at FROM quarantine ORDER BY at")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Quarantined
	for rows.Next() {
		var q Quarantined
		var at int64
		if err := rows.Scan(&q.Kind, &q.ID, &q.Error, &at); err != nil {
			return nil, err
		}
		q.At = FromUnixNano(at)
		out = append(out, q)
	}
	return out, rows.Err()
}
