package store

// The two backends, and every way they differ.
//
// The store's SQL is written once, with ? placeholders, in the subset both
// SQLite and PostgreSQL understand: INSERT ... ON CONFLICT ... DO UPDATE
// SET x=excluded.x, ON CONFLICT DO NOTHING, savepoints, LIMIT/OFFSET,
// partial indexes. What differs lives here and nowhere else:
//
//   - Placeholders. PostgreSQL numbers them ($1, $2, ...). The PostgreSQL
//     connection is wrapped (rebindConn) so that every statement, the
//     store's and the job kinds' alike, is rewritten from ? to $n on its
//     way to the server; callers keep writing ?.
//   - Types and DDL. Each dialect has its own migrations (migrate.go for
//     SQLite, postgres_schema.go for PostgreSQL), with the same version
//     numbers: version N means the same tables and columns in both.
//     PostgreSQL gets BIGINT for every integer (times are Unix nanoseconds),
//     DOUBLE PRECISION for reals, BYTEA for blobs, identity columns for
//     SQLite's AUTOINCREMENT, and a column named rowid on the tables whose
//     insertion order is read back (runs, batches), where SQLite has one
//     implicitly.
//   - The schema version. SQLite keeps it in the file header
//     (application_id, user_version); PostgreSQL in a one-row table,
//     arbiter_schema. Either way a newer or foreign schema is refused
//     before anything is written.
//   - Connections. SQLite: one connection (one writer anyway). PostgreSQL:
//     a small pool; every write still goes through the one group-commit
//     writer of the process (group.go), so writes are applied in order.
//   - Backups. SQLite: VACUUM INTO. PostgreSQL: pg_dump or the database's
//     own backups; Backup refuses.
//
// Isolation: SQLite transactions are serializable (one writer). PostgreSQL
// runs at its default, READ COMMITTED. That is enough with one coordinator
// (its writes are serialized by its writer); keyed inserts (a run per unit
// and worker, a batch per unit id, a tune update per batch, a job per seq)
// make a second writer's duplicate fail rather than count twice.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Backend names which database a store runs on.
type Backend string

// The backends.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backend is the database the store runs on.
func (s *Store) Backend() Backend { return s.backend }

// rebind rewrites ? placeholders as $1, $2, ... outside string literals,
// quoted identifiers and comments.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(q[i+1:], c)
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+2])
			i += j + 1
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+1])
			i += j
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				b.WriteString(q[i:])
				return b.String()
			}
			b.WriteString(q[i : i+j+4])
			i += j + 3
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// rebindConnector opens pgx connections that rebind every statement.
type rebindConnector struct{ inner driver.Connector }

func (c rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rebindConn{Conn: conn.(*stdlib.Conn)}, nil
}

func (c rebindConnector) Driver() driver.Driver { return c.inner.Driver() }

// rebindConn is pgx's connection with its statements rebound; embedding
// keeps every optional interface database/sql looks for (transactions,
// pings, session resets, argument checks).
type rebindConn struct{ *stdlib.Conn }

func (c *rebindConn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(rebind(query))
}

func (c *rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c *rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

func (c *rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// PostgresDB opens a database/sql pool on the PostgreSQL database dsn
// names whose statements take ? placeholders, as the store's do: for
// tools and tests that read a store's tables directly.
func PostgresDB(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad PostgreSQL URL %s", redactURL(dsn))
	}
	return openPostgresDB(cfg), nil
}

// openPostgresDB opens a pool on cfg whose statements take ? placeholders.
func openPostgresDB(cfg *pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(rebindConnector{inner: stdlib.GetConnector(*cfg)})
}

// Ping runs one trivial query on the database: the health check of a
// coordinator that has no election to do it (SQLite).
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}
