package spsaplan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An engine that travels to the workers: the options of an upload= binary
// that runs here are read from it (and a parameter it lacks refused before
// anything is sent); a file that does not run here, a source tree and an
// artifact= take a list of parameters, which the workers check, and refuse
// from-engine saying to give one. The spec carries the artifact, not a
// command.
func TestParseUploadedEngine(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "engine.sh")
	os.WriteFile(runs, []byte("#!/bin/sh\nwhile read l; do case \"$l\" in uci) echo 'option name Aggression type spin default 5 min 0 max 10'; echo uciok;; quit) exit;; esac; done\n"), 0o755)
	notHere := filepath.Join(dir, "engine.exe")
	os.WriteFile(notHere, []byte("MZ not a program for this machine"), 0o644)
	parse := func(engine, params string, remote bool) (*Plan, error) {
		return Parse(context.Background(), flags(func(f *Flags) { f.Engine, f.Params, f.Remote, f.BatchPairs = engine, params, remote, 0 }))
	}

	p, err := parse("name=x,upload="+runs, "from-engine", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Config.Params) != 1 || p.Config.Params[0].Name != "Aggression" || p.Config.Params[0].Max != 10 || p.Unchecked != "" {
		t.Fatalf("params %+v, unchecked %q", p.Config.Params, p.Unchecked)
	}
	spec, err := p.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if e := spec.GetEngine(); e.GetCommand() != "" || e.GetArtifact() == nil || p.Travel.Upload != runs {
		t.Fatalf("spec engine %v, travel %+v: want an artifact to upload", e, p.Travel)
	}
	if _, err := parse("name=x,upload="+runs, "NoSuch,1,0,5,1,0.002", true); err == nil ||
		!strings.Contains(err.Error(), `param "NoSuch": the engine has no option`) {
		t.Errorf("a parameter the upload lacks: %v", err)
	}

	for _, c := range []struct{ engine, why string }{
		{"name=x,upload=" + notHere, "upload=" + notHere + " does not run as a UCI engine on this machine"},
		{"name=x,source=" + dir + ",build=make", "is built on the workers"},
		{"name=x,artifact=0123456789abcdef", "is on the coordinator, not here"},
	} {
		p, err := parse(c.engine, "Aggression,int,5,0,10,1,0.002", true)
		if err != nil {
			t.Errorf("%s with a list: %v", c.engine, err)
		} else if !strings.Contains(p.Unchecked, c.why) || !strings.Contains(p.Unchecked, "checked by the workers") {
			t.Errorf("%s with a list: unchecked %q", c.engine, p.Unchecked)
		}
		if _, err := parse(c.engine, "from-engine", true); err == nil || !strings.Contains(err.Error(), c.why) ||
			!strings.Contains(err.Error(), "give the parameters as a list or a file") {
			t.Errorf("%s from-engine: %v", c.engine, err)
		}
	}
	// A local tune plays a program here.
	if _, err := parse("name=x,upload="+runs, "from-engine", false); err == nil || !strings.Contains(err.Error(), "for tunes on the cluster") {
		t.Errorf("upload= in a local tune: %v", err)
	}
	// A bare file name is the file in the working directory.
	books, err := filepath.Abs("../../books/uho-200.epd")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if p, err := Parse(context.Background(), flags(func(f *Flags) {
		f.Engine, f.Params, f.Remote, f.BatchPairs, f.Openings = "name=x,upload=engine.sh", "from-engine", true, 0, "file="+books
	})); err != nil || len(p.Config.Params) != 1 {
		t.Errorf("upload=engine.sh in its directory: %v", err)
	}
}
