package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newBackupCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var to string
	cmd := &cobra.Command{
		Use:   "backup --to FILE",
		Short: "Copy a running coordinator's store to FILE (online, consistent; admin)",
		Long: `backup asks the coordinator for a consistent copy of its SQLite store,
taken while it keeps serving (VACUUM INTO), and writes it to FILE.

To restore: stop the coordinator, move its data directory's coordinator.db
(and any coordinator.db-wal and -shm beside it) away, copy FILE to
DATA/coordinator.db, and start the coordinator again. Leases are not in the
store: workers that held some get them back on their next heartbeat or
recompute their units.`,
		Example: `  arbiter backup --coordinator coord:7700 --token-file admin.token --to arbiter-$(date +%F).db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return clicmd.Required("to", "the file to write the copy to")
			}
			if _, err := os.Stat(to); err == nil {
				return usageError("--to %s: exists (refusing to overwrite)", to)
			}
			return f.Call(cmd, func(r *clicmd.Call) error {
				stream, err := r.C.Admin.Backup(r.Ctx, &arbiterv1.BackupRequest{})
				if err != nil {
					return r.Failed("backup", err)
				}
				tmp, err := os.CreateTemp(filepath.Dir(to), ".arbiter-backup-*")
				if err != nil {
					return usageError("--to %s: %v", to, err)
				}
				defer os.Remove(tmp.Name())
				n := 0
				for {
					resp, err := stream.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						tmp.Close()
						return r.Failed("backup", err)
					}
					if _, err := tmp.Write(resp.GetData()); err != nil {
						tmp.Close()
						return fmt.Errorf("--to %s: %w", to, err)
					}
					n += len(resp.GetData())
				}
				if err := tmp.Sync(); err != nil {
					return err
				}
				if err := tmp.Close(); err != nil {
					return err
				}
				if err := os.Rename(tmp.Name(), to); err != nil {
					return err
				}
				fmt.Fprintf(r.Out, "backup written to %s (%d bytes)\n", to, n)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "file to write (must not exist)")
	f.Add(cmd.Flags())
	return cmd
}
