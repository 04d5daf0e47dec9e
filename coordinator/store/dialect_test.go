package store

import "testing"

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                                   "SELECT 1",
		"INSERT INTO t(a,b) VALUES(?,?)":             "INSERT INTO t(a,b) VALUES($1,$2)",
		"SELECT '?' , ? FROM t WHERE x='it''s ?'":    "SELECT '?' , $1 FROM t WHERE x='it''s ?'",
		`SELECT "odd?name", ? -- what? ` + "\n ?":    `SELECT "odd?name", $1 -- what? ` + "\n $2",
		"SELECT /* ? */ ? /* unterminated ?":         "SELECT /* ? */ $1 /* unterminated ?",
		"UPDATE t SET a=? WHERE b=? AND c=? LIMIT ?": "UPDATE t SET a=$1 WHERE b=$2 AND c=$3 LIMIT $4",
		"SELECT 'unterminated ?":                     "SELECT 'unterminated ?",
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}
