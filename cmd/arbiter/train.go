package main

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/engine/nnue"
	"github.com/arbiter-chess/arbiter/train"
)

func newTrainCommand() *cobra.Command {
	cfg := train.DefaultConfig()
	cfg.Threads = runtime.NumCPU()
	var data []string
	var out, checkpoints, resume string
	cmd := &cobra.Command{
		Use:   "train",
		Short: "Train the embedded engine's net on this machine's cores from bullet's text format",
		Long: `Train the embedded engine's NNUE (` + nnue.Architecture() + `)
from positions in bullet's text format, one a line:

  <FEN> | <score in centipawns, White's view> | <result 1.0, 0.5 or 0.0, White's view>

(what the farm's DATAGEN writes). It reads that text format only: a
bulletformat, viriformat or PGN file is refused; pull a dataset as text
with arbiter datagen pull JOB --format text. The target is wdl × result + (1 − wdl) ×
sigmoid(score / scale), the loss (sigmoid(output) − target)², the optimiser
AdamW with weights clipped to ±1.98 and a cosine learning-rate decay, as
bullet's example simple.rs trains the same net on a GPU. A run is
deterministic for its seed and data (whatever --threads); --checkpoints
saves every epoch, --resume continues from one. The net written loads
with the engine's EvalFile option (and UseNNUE=true). docs/nnue.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(data) == 0 {
				return clicmd.Required("data", "the training positions")
			}
			if out == "" {
				return clicmd.Required("out", "where the net is written")
			}
			if err := cfg.Validate(); err != nil {
				return usageError("%v", err)
			}
			for _, path := range data {
				if err := checkTextData(path); err != nil {
					return err
				}
			}
			ds, err := train.ReadFiles(data)
			if err != nil {
				return err
			}
			var s *train.State
			if resume != "" {
				if s, err = train.LoadCheckpoint(resume); err != nil {
					return err
				}
				if !cmd.Flags().Changed("seed") {
					cfg.Seed = s.Seed
				}
			} else {
				s = train.NewState(&cfg, ds)
			}
			return train.Run(cfg, ds, s, checkpoints, out, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&data, "data", nil, "training file(s) in bullet's text format, the only one read (repeat or comma-separate)")
	fl.StringVar(&out, "out", "", "the net to write (engine/nnue layout, bullet's quantised.bin)")
	fl.IntVar(&cfg.Epochs, "epochs", cfg.Epochs, "passes over the training positions")
	fl.IntVar(&cfg.BatchSize, "batch", cfg.BatchSize, "positions per optimiser step")
	fl.Float64Var(&cfg.LR, "lr", cfg.LR, "learning rate at the start")
	fl.Float64Var(&cfg.LRFinal, "lr-final", cfg.LRFinal, "learning rate at the end (cosine decay over all batches)")
	fl.Float64Var(&cfg.WDL, "wdl", cfg.WDL, "share of the game result in the target (bullet's wdl), 0 to 1")
	fl.Float64Var(&cfg.Scale, "scale", cfg.Scale, "sigmoid scale of the score in centipawns (bullet's eval scale)")
	fl.Float64Var(&cfg.Val, "val", cfg.Val, "share of the positions held out for the validation loss")
	fl.Float64Var(&cfg.Decay, "weight-decay", cfg.Decay, "AdamW's weight decay")
	fl.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the validation split, the initial weights and each epoch's order")
	fl.IntVar(&cfg.Threads, "threads", cfg.Threads, "threads (the result does not depend on them)")
	fl.StringVar(&checkpoints, "checkpoints", "", "directory for epoch-N.ckpt and epoch-N.nnue after every epoch")
	fl.StringVar(&resume, "resume", "", "continue from this checkpoint (same data and seed)")
	return cmd
}

// checkTextData refuses a --data file that is not text (bulletformat's
// and viriformat's binary records, a compressed file) with a message that
// says what to do, instead of a parse error on its first "line".
func checkTextData(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return usageError("--data %s: %v", path, err)
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return usageError("--data %s: %v", path, err)
	}
	head = head[:n]
	// A cut at the buffer's end may split one UTF-8 character.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head) && n == 4096; i++ {
		head = head[:len(head)-1]
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
		return usageError("--data %s: binary, not bullet's text format (FEN | score | result a line), the only one train reads; "+
			"pull the dataset with arbiter datagen pull JOB --format text", path)
	}
	return nil
}
