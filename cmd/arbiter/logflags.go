package main

import (
	"os"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/arbiter-chess/arbiter/base/logging"
)

// logFlags are --log-level and --log-format, shared by the long-running
// roles (coordinator, worker, up).
type logFlags struct {
	level, format string
}

func (l *logFlags) add(fs *pflag.FlagSet, level string) {
	fs.StringVar(&l.level, "log-level", level, "log level: debug, info, warn, error")
	fs.StringVar(&l.format, "log-format", logging.FormatJSON, "log format: json (one object per line) or console (one line per event, for people)")
}

// logger builds the logger to stderr; bad values are usage errors.
func (l logFlags) logger() (*zap.Logger, error) {
	log, err := logging.Build(l.level, l.format, os.Stderr)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return log, nil
}
