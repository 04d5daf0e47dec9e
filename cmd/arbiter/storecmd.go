package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/coordinator/store"
)

func newStoreCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Work on a coordinator's store offline (copy a farm to PostgreSQL)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newStoreCopyCommand())
	return cmd
}

func newStoreCopyCommand() *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "copy --from DIR --to postgres://...",
		Short: "Copy a SQLite data dir's store into an empty PostgreSQL database, and verify the copy",
		Long: `copy moves a farm from its SQLite store to PostgreSQL: every table (jobs,
units, runs, tests, batches, games, tunes, verify reports, artifacts'
metadata, credentials, the job kinds' tables) is copied in one transaction
into an empty database, then each table is read back from both sides and
compared (rows and a digest of their values). A failed copy leaves the
database empty.

Stop the coordinator first. The SQLite store is upgraded to this build's
schema first, as starting this build's coordinator on it would.

Files beside the database stay in the data dir (engine artifacts under
DIR/artifacts, datagen shards under DIR/datagen): start the coordinator on
PostgreSQL with the same --data DIR, or move those directories along.`,
		Example: `  arbiter store copy --from /var/lib/arbiter --to postgres://arbiter:PASSWORD@db:5432/arbiter
  arbiter coordinator --data /var/lib/arbiter --store postgres://arbiter:PASSWORD@db:5432/arbiter ...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				return clicmd.Required("from", "the data directory of the SQLite store")
			}
			if to == "" {
				to = os.Getenv(envStore)
			}
			if to == "" {
				return clicmd.Required("to", "the PostgreSQL database, postgres://user:password@host:port/database (or $"+envStore+")")
			}
			if !store.IsPostgresURL(to) {
				return usageError("--to: not a PostgreSQL URL: want postgres://user:password@host:port/database")
			}
			// Open would make an empty store where none is: a mistyped
			// --from must not copy nothing and call it done.
			if fi, err := os.Stat(filepath.Join(from, store.FileName)); err != nil || fi.Size() == 0 {
				return usageError("--from %s: no %s there (the coordinator's --data directory)", from, store.FileName)
			}
			src, err := store.Open(from)
			if err != nil {
				return usageError("--from %s: %v", from, err)
			}
			defer src.Close()
			dst, err := store.OpenPostgres(to, from)
			if err != nil {
				return usageError("--to: %v", err)
			}
			defer dst.Close()
			tables, err := store.Copy(context.Background(), src, dst)
			if errors.Is(err, store.ErrNotEmpty) {
				return usageError("--to %s: %v", dst.Path(), err)
			}
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			var rows int64
			for _, t := range tables {
				fmt.Fprintf(out, "%-18s %10d rows  %s\n", t.Table, t.Rows, t.Digest[:16])
				rows += t.Rows
			}
			fmt.Fprintf(out, "copied %d rows of %d tables from %s to %s; verified: every table's rows and digest match\n",
				rows, len(tables), src.Path(), dst.Path())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "data directory of the SQLite store (coordinator --data)")
	fl.StringVar(&to, "to", "", "empty PostgreSQL database to copy into, postgres://user:password@host:port/db (default: $"+envStore+")")
	return cmd
}
