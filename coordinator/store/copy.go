package store

// Copying a store to another backend (arbiter store copy): a farm moves
// from its SQLite file to PostgreSQL.
//
// Invariants:
//   - The source is read in one read transaction: one snapshot, even if
//     something still writes to it.
//   - The destination is written in one transaction: after a failure or a
//     crash it is as empty as it was.
//   - The destination must be empty (a fresh schema): a copy never merges.
//   - Every table is copied, the job kinds' included, column by column by
//     name; the order of insertion (rowid, identity columns) is kept, so
//     what is read back "in the order accepted" is the same order.
//   - The copy is verified after it committed: per table, the row count
//     and a digest of every row's values (independent of row order, since
//     the two databases may sort text differently) must be equal.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
)

// TableCopy is what was copied of one table.
type TableCopy struct {
	Table  string
	Rows   int64
	Digest string // hex SHA-256 over the sorted row hashes
}

// ErrNotEmpty is Copy's error for a destination that holds data.
var ErrNotEmpty = fmt.Errorf("destination is not empty")

// tableColumns is a table's columns on s's backend.
func tableColumns(ctx context.Context, q Querier, b Backend, table string) ([]string, error) {
	var query string
	if b == Postgres {
		query = "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position"
	} else {
		query = "SELECT name FROM pragma_table_info(?) ORDER BY cid"
	}
	return queryStrings(ctx, q, query, table)
}

func queryStrings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// tables lists s's tables (not the backend's own, nor arbiter_schema:
// the version is the schema's, not data).
func tables(ctx context.Context, q Querier, b Backend) ([]string, error) {
	if b == Postgres {
		return queryStrings(ctx, q, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()
			AND table_type = 'BASE TABLE' AND table_name != 'arbiter_schema' ORDER BY table_name`)
	}
	return queryStrings(ctx, q, "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
}

// quoteIdent quotes a table or column name read from the schema.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// copyPlan is, for one table, the columns copied (those of the source,
// plus rowid where the destination keeps SQLite's insertion order in a
// column of that name) and the destination's blob columns.
type copyPlan struct {
	table string
	cols  []string
	blob  map[string]bool
}

func (p copyPlan) selectSQL() string {
	q := make([]string, len(p.cols))
	for i, c := range p.cols {
		q[i] = quoteIdent(c)
	}
	return "SELECT " + strings.Join(q, ", ") + " FROM " + quoteIdent(p.table)
}

// Copy copies every row of from into to, which must be empty, and
// verifies the copy. Both stores must be at the same schema version (Open
// brings each to this build's).
func Copy(ctx context.Context, from, to *Store) ([]TableCopy, error) {
	if from.backend != SQLite || to.backend != Postgres {
		return nil, fmt.Errorf("store copy: copies a SQLite store to PostgreSQL, not %s to %s", from.backend, to.backend)
	}
	src, err := from.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer src.Rollback()
	srcTables, err := tables(ctx, src, from.backend)
	if err != nil {
		return nil, err
	}
	dstTables, err := tables(ctx, to.db, to.backend)
	if err != nil {
		return nil, err
	}
	if missing := setMinus(srcTables, dstTables); len(missing) > 0 {
		return nil, fmt.Errorf("store copy: the destination has no table %s (a job kind this build does not know?)", strings.Join(missing, ", "))
	}
	var plans []copyPlan
	for _, t := range srcTables {
		p, err := plan(ctx, src, from.backend, to, t)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	// Empty, but for the kinds' schema versions that opening it wrote.
	for _, t := range dstTables {
		var n int64
		q := "SELECT COUNT(*) FROM " + quoteIdent(t)
		if t == "meta" {
			q += " WHERE key NOT LIKE 'schema:%'"
		}
		if err := to.db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			return nil, fmt.Errorf("store copy: %w: table %s holds %d rows; copy into an empty database", ErrNotEmpty, t, n)
		}
	}
	if err := checkKindVersions(ctx, src, to); err != nil {
		return nil, err
	}
	dst, err := to.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer dst.Rollback()
	for _, p := range plans {
		if err := copyTable(ctx, src, dst, p); err != nil {
			return nil, fmt.Errorf("store copy: table %s: %w", p.table, err)
		}
	}
	if to.backend == Postgres {
		if err := resetIdentities(ctx, dst); err != nil {
			return nil, err
		}
	}
	if err := dst.Commit(); err != nil {
		return nil, fmt.Errorf("store copy: commit: %w", err)
	}
	// Verify: the source snapshot against what the destination now holds.
	var out []TableCopy
	for _, p := range plans {
		a, err := digest(ctx, src, p)
		if err != nil {
			return nil, fmt.Errorf("store copy: verify %s (source): %w", p.table, err)
		}
		b, err := digest(ctx, to.db, p)
		if err != nil {
			return nil, fmt.Errorf("store copy: verify %s (destination): %w", p.table, err)
		}
		if a != b {
			return nil, fmt.Errorf("store copy: verify %s: source has %d rows (digest %s), destination %d rows (digest %s)",
				p.table, a.Rows, a.Digest[:16], b.Rows, b.Digest[:16])
		}
		out = append(out, a)
	}
	return out, nil
}

func setMinus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func plan(ctx context.Context, src *sql.Tx, b Backend, to *Store, table string) (copyPlan, error) {
	p := copyPlan{table: table, blob: map[string]bool{}}
	cols, err := tableColumns(ctx, src, b, table)
	if err != nil {
		return p, err
	}
	dcols, err := tableColumns(ctx, to.db, to.backend, table)
	if err != nil {
		return p, err
	}
	p.cols = cols
	if b == SQLite && slices.Contains(dcols, "rowid") && !slices.Contains(cols, "rowid") {
		p.cols = append(p.cols, "rowid")
	}
	if missing := setMinus(p.cols, dcols); len(missing) > 0 {
		return p, fmt.Errorf("store copy: table %s: the destination has no column %s", table, strings.Join(missing, ", "))
	}
	if to.backend == Postgres {
		blobs, err := queryStrings(ctx, to.db, `SELECT column_name FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ? AND data_type = 'bytea'`, table)
		if err != nil {
			return p, err
		}
		for _, c := range blobs {
			p.blob[c] = true
		}
	}
	return p, nil
}

// checkKindVersions: the kinds' tables are copied as they are, so each
// kind's schema must be at the same version on both sides.
func checkKindVersions(ctx context.Context, src *sql.Tx, to *Store) error {
	rows, err := src.QueryContext(ctx, "SELECT key, value FROM meta WHERE key LIKE 'schema:%'")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var v []byte
		if err := rows.Scan(&key, &v); err != nil {
			return err
		}
		have, err := to.Meta(ctx, key)
		if err != nil {
			return err
		}
		if string(have) != string(v) {
			return fmt.Errorf("store copy: %s is version %s in the source and %q in the destination", key, v, have)
		}
	}
	return rows.Err()
}

// copyRowsPerInsert bounds the rows of one multi-row INSERT (PostgreSQL
// takes at most 65535 parameters in a statement).
const copyRowsPerInsert = 200

func copyTable(ctx context.Context, src *sql.Tx, dst *sql.Tx, p copyPlan) error {
	q := p.selectSQL()
	if p.table == "meta" {
		// The destination wrote its own kinds' versions (checked equal).
		q += " WHERE key NOT LIKE 'schema:%'"
	}
	rows, err := src.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols := make([]string, len(p.cols))
	for i, c := range p.cols {
		cols[i] = quoteIdent(c)
	}
	head := "INSERT INTO " + quoteIdent(p.table) + "(" + strings.Join(cols, ",") + ") VALUES "
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	var batch []any
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		stmt := head + strings.TrimSuffix(strings.Repeat(one+",", n), ",")
		if _, err := dst.ExecContext(ctx, stmt, batch...); err != nil {
			return err
		}
		batch, n = batch[:0], 0
		return nil
	}
	vals := make([]any, len(p.cols))
	ptrs := make([]any, len(p.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			// SQLite keeps what it was given: text in a blob column, or
			// bytes in a text one. The destination's type decides.
			switch x := v.(type) {
			case string:
				if p.blob[p.cols[i]] {
					v = []byte(x)
				}
			case []byte:
				if !p.blob[p.cols[i]] {
					v = string(x)
				} else {
					v = slices.Clone(x)
				}
			}
			batch = append(batch, v)
		}
		n++
		if n == copyRowsPerInsert {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

// resetIdentities moves every identity column's sequence past the rows
// copied with explicit values, so the next insert numbers on from there.
func resetIdentities(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES'`)
	if err != nil {
		return err
	}
	type col struct{ table, column string }
	var cols []col
	for rows.Next() {
		var c col
		if err := rows.Scan(&c.table, &c.column); err != nil {
			rows.Close()
			return err
		}
		cols = append(cols, c)
	}
	rows.Close()
	for _, c := range cols {
		// setval(seq, max, true): the next value is max+1; an empty table
		// keeps its sequence where it was.
		q := fmt.Sprintf(`SELECT setval(pg_get_serial_sequence(?, ?), MAX(%s)) FROM %s HAVING MAX(%s) IS NOT NULL`,
			quoteIdent(c.column), quoteIdent(c.table), quoteIdent(c.column))
		if _, err := tx.ExecContext(ctx, q, c.table, c.column); err != nil {
			return fmt.Errorf("store copy: identity of %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}

// digest hashes every row of a table, each row's values in the plan's
// column order, and the sorted row hashes together.
func digest(ctx context.Context, q Querier, p copyPlan) (TableCopy, error) {
	out := TableCopy{Table: p.table}
	sel := p.selectSQL()
	if p.table == "meta" {
		sel += " WHERE key NOT LIKE 'schema:%'"
	}
	rows, err := q.QueryContext(ctx, sel)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	vals := make([]any, len(p.cols))
	ptrs := make([]any, len(p.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var hashes [][32]byte
	var buf []byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return out, err
		}
		buf = buf[:0]
		for _, v := range vals {
			buf = appendValue(buf, v)
		}
		hashes = append(hashes, sha256.Sum256(buf))
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	slices.SortFunc(hashes, func(a, b [32]byte) int { return strings.Compare(string(a[:]), string(b[:])) })
	h := sha256.New()
	for _, x := range hashes {
		h.Write(x[:])
	}
	out.Rows = int64(len(hashes))
	out.Digest = hex.EncodeToString(h.Sum(nil))
	return out, nil
}

// appendValue encodes one value, the same whichever backend read it:
// text and bytes alike (the copy may turn one into the other), numbers
// by value.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case int64:
		b = append(b, 'i')
		return binary.BigEndian.AppendUint64(b, uint64(x))
	case float64:
		b = append(b, 'f')
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	case bool:
		if x {
			return append(b, 'i', 0, 0, 0, 0, 0, 0, 0, 1)
		}
		return append(b, 'i', 0, 0, 0, 0, 0, 0, 0, 0)
	case string:
		b = append(b, 's')
		b = binary.BigEndian.AppendUint64(b, uint64(len(x)))
		return append(b, x...)
	case []byte:
		b = append(b, 's')
		b = binary.BigEndian.AppendUint64(b, uint64(len(x)))
		return append(b, x...)
	default:
		return append(b, fmt.Sprintf("?%T:%v", v, v)...)
	}
}
