// Package logging builds the cluster's structured loggers: zap, JSON, one
// event per line, with job, unit and worker ids as fields.
package logging

import (
	"fmt"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a JSON logger to stderr at level ("debug", "info", "warn",
// "error").
func New(level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(os.Stderr), lvl)
	return zap.New(core), nil
}

// Field names shared by coordinator and worker logs.
const (
	JobID    = "job_id"
	UnitID   = "unit_id"
	WorkerID = "worker_id"
	LeaseID  = "lease_id"
)
