// Package logging builds the cluster's structured loggers: zap, one event
// per line (JSON, or zap's console format for people), with job, unit and
// worker ids as fields.
package logging

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Formats accepted by Build.
const (
	FormatJSON    = "json"
	FormatConsole = "console"
)

// Build returns a logger to w at level ("debug", "info", "warn", "error")
// in format ("json" or "console"; "" is JSON). Either way one event is one
// line: the console format keeps fields as a JSON object at the line's end.
func Build(level, format string, w io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil || level == "" {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	switch format {
	case FormatJSON, "":
		encoder = zapcore.NewJSONEncoder(enc)
	case FormatConsole:
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(enc)
	default:
		return nil, fmt.Errorf("log format %q: want json or console", format)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(w)), lvl)), nil
}

// Field names shared by coordinator and worker logs.
const (
	JobID    = "job_id"
	UnitID   = "unit_id"
	WorkerID = "worker_id"
	LeaseID  = "lease_id"
)
