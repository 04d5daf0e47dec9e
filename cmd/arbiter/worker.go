package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/obs"
	"github.com/arbiter-chess/arbiter/match/builtin"
	"github.com/arbiter-chess/arbiter/worker"
)

func newWorkerCommand() *cobra.Command {
	var (
		f        clientFlags
		threads  int
		hashMB   int
		name     string
		grace    time.Duration
		logs     logFlags
		httpAddr string
	)
	cmd := &cobra.Command{
		Use:     "worker",
		Short:   "Run a worker: lease units from a coordinator and compute them",
		Example: `  ARBITER_TOKEN=secret arbiter worker --coordinator host:7700 --threads 8 --hash 1024`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkThreads(threads); err != nil {
				return err
			}
			if err := checkHash(hashMB, 1); err != nil {
				return err
			}
			verifyEngines, err := verifyEnginesOf(cmd)
			if err != nil {
				return err
			}
			log, err := logs.logger()
			if err != nil {
				return err
			}
			c, err := f.dial()
			if err != nil {
				return err
			}
			defer c.Close()
			reg := obs.NewRegistry()
			w, err := worker.New(worker.Config{Conn: c.Conn(), Name: name, Threads: threads, HashMB: hashMB, Grace: grace, Logger: log,
				VerifyEngines: verifyEngines, Builtin: builtin.New,
				Registerer: reg})
			if err != nil {
				return usageError("%v", err)
			}
			if httpAddr != "" {
				hs, err := obs.Serve(httpAddr, obs.Handler(reg, w.Ready), log)
				if err != nil {
					return usageError("--http %s: %v", httpAddr, err)
				}
				defer hs.Close()
			}
			ctx, cancel := signalContext()
			defer cancel()
			err = w.Run(ctx)
			log.Sync()
			if err != nil {
				return callError(c, "worker", err)
			}
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().IntVar(&threads, "threads", 0, "units computed at once (default: all cores)")
	cmd.Flags().IntVar(&hashMB, "hash", workerHashMB, "perft hash table size in MB, shared by all threads")
	cmd.Flags().StringVar(&name, "name", "", "worker name shown by the coordinator (default: host name)")
	addVerifyEngineFlag(cmd.Flags())
	cmd.Flags().DurationVar(&grace, "grace", 30*time.Second, "on SIGTERM, time to finish running units before releasing them")
	cmd.Flags().StringVar(&httpAddr, "http", "", "HTTP listen address for /metrics, /healthz and /readyz (default: off)")
	logs.add(cmd.Flags(), "info")
	return cmd
}
