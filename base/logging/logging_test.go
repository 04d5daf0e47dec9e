package logging

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestJSONOneEventPerLine(t *testing.T) {
	var buf bytes.Buffer
	log, err := Build("info", FormatJSON, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.Info("unit computed", zap.String(JobID, "p1"), zap.String(UnitID, "p1.0"), zap.String(WorkerID, "w-1"))
	log.Warn("lease expired\nwith a newline", zap.String(LeaseID, "l1"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines (debug filtered), got %d:\n%s", len(lines), buf.String())
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil {
		t.Fatalf("line 1 is not JSON: %v", err)
	}
	for k, v := range map[string]string{"level": "info", "msg": "unit computed", JobID: "p1", UnitID: "p1.0", WorkerID: "w-1"} {
		if ev[k] != v {
			t.Errorf("%s = %v, want %s", k, ev[k], v)
		}
	}
	if _, ok := ev["ts"]; !ok {
		t.Error("no ts field")
	}
}

func TestConsoleOneEventPerLine(t *testing.T) {
	var buf bytes.Buffer
	log, err := Build("debug", FormatConsole, &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("lease granted", zap.String(JobID, "p1"), zap.String(WorkerID, "w-2"))
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "DEBUG") || !strings.Contains(out, `"worker_id": "w-2"`) {
		t.Fatalf("console line: %q", out)
	}
}

func TestBadLevelAndFormat(t *testing.T) {
	if _, err := Build("loud", FormatJSON, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `"loud"`) {
		t.Errorf("bad level: %v", err)
	}
	if _, err := Build("info", "xml", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("bad format: %v", err)
	}
}
