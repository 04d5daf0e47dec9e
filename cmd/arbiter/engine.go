package main

// `arbiter engine upload|list|show|rm`: the engines a coordinator keeps for
// its workers (package artifactclient packs and uploads; the coordinator
// stores by SHA-256).

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
	"github.com/arbiter-chess/arbiter/spec/enginespec"
	"github.com/arbiter-chess/arbiter/spec/matchspec"
)

func newEngineCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "engine",
		Short: "Upload, list, show and remove the engines a coordinator sends to its workers",
	}
	cmd.AddCommand(newEngineUploadCommand(), newEngineListCommand(), newEngineShowCommand(), newEngineRmCommand())
	return cmd
}

func newEngineUploadCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var spec enginespec.Spec
	cmd := &cobra.Command{
		Use:   "upload PATH|DIR|git:REPO@REF",
		Short: "Upload a program, a source tree, or a commit of a local git repository",
		Example: `  arbiter engine upload ./build/engine --name dev --bench 780586
  arbiter engine upload ./src --build "make -j EXE=engine" --bench 780586
  arbiter engine upload git:.@HEAD --build "make -j EXE=engine" --name patch`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if spec.Name == "" {
				spec.Name = defaultEngineName(args[0])
			}
			p, err := artifactclient.PackPath(args[0], spec)
			if err != nil {
				return usageError("%v", err)
			}
			defer p.Close()
			if p.Request.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_SOURCE && spec.Build == "" {
				return usageError("--build: a source tree needs its build command (e.g. --build \"make -j EXE=engine\")")
			}
			if p.Request.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_BINARY && (spec.Build != "" || spec.Exe != "") {
				return usageError("--build and --exe go with a source tree (a directory or git:REPO@REF)")
			}
			return f.Call(cmd, func(r *clicmd.Call) error {
				a, err := artifactclient.Upload(r.Ctx, r.C.Conn(), p, cmd.ErrOrStderr())
				if err != nil {
					return r.Failed("upload", err)
				}
				printArtifact(r.Out, a)
				return nil
			})
		},
	}
	f.Add(cmd.Flags())
	cmd.Flags().StringVar(&spec.Name, "name", "", "the engine's name (default: the file's or directory's name)")
	cmd.Flags().StringVar(&spec.Build, "build", "", "source trees: the command that builds the engine in the unpacked tree")
	cmd.Flags().StringVar(&spec.Exe, "exe", "", "source trees: the program the build makes, in the tree (default \"engine\")")
	cmd.Flags().Uint64Var(&spec.Bench, "bench", 0, "the engine's bench node count (its signature), checked by every worker")
	return cmd
}

func newEngineListCommand() *cobra.Command {
	var limit uint32
	cmd := clicmd.NewClientCommand(&cobra.Command{
		Use:   "list",
		Short: "List the stored engines, newest first",
		Args:  cobra.NoArgs,
	}, `print {"engines": [...], "bytes_stored": N} (docs/json.md)`, func(r *clicmd.Call, _ []string) error {
		resp, err := clicmd.Retried(r, func(ctx context.Context) (*arbiterv1.ListArtifactsResponse, error) {
			return arbiterv1.NewArtifactServiceClient(r.C.Conn()).ListArtifacts(ctx, &arbiterv1.ListArtifactsRequest{Limit: limit})
		})
		if err != nil {
			return r.Failed("list engines", err)
		}
		// Nets are artifacts too; `arbiter net list` lists them.
		engines := slices.DeleteFunc(resp.GetArtifacts(), func(a *arbiterv1.Artifact) bool {
			return a.GetKind() == arbiterv1.ArtifactKind_ARTIFACT_KIND_NET
		})
		list := engineListJSON{Engines: []engineJSON{}, BytesStored: resp.GetBytesStored()}
		for _, a := range engines {
			list.Engines = append(list.Engines, engineJSONOf(a))
		}
		return r.Print(list, func(w io.Writer) error {
			tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "SHA256\tNAME\tKIND\tSIZE\tBENCH\tCOMMIT\tUPLOADER\tUSED BY")
			for _, a := range engines {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", a.GetSha256()[:12], a.GetName(), matchspec.ArtifactKindName(a.GetKind()), a.GetSize(),
					benchText(a.GetBench()), shortCommit(a.GetCommit()), a.GetUploader(), strings.Join(a.GetUsedBy(), " "))
			}
			tw.Flush()
			fmt.Fprintf(w, "%d engines, %d bytes stored (engines and nets)\n", len(engines), resp.GetBytesStored())
			return nil
		})
	})
	cmd.Flags().Uint32Var(&limit, "limit", 100, "at most this many")
	return cmd
}

func newEngineShowCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "show SHA",
		Short: "Show a stored engine (by its SHA-256 or a prefix of 8+ hex digits)",
		Args:  cobra.ExactArgs(1),
	}, "print the engine as one JSON object (docs/json.md)", func(r *clicmd.Call, args []string) error {
		resp, err := getArtifact(r, args[0])
		if err != nil {
			return r.Failed("show engine", err)
		}
		return r.Print(engineJSONOf(resp.GetArtifact()), func(w io.Writer) error {
			printArtifact(w, resp.GetArtifact())
			return nil
		})
	})
}

// engineJSON is a stored engine in `engine list|show --json`
// (docs/json/engine.schema.json).
type engineJSON struct {
	SHA256     string   `json:"sha256"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Size       uint64   `json:"size"`
	Platform   string   `json:"platform,omitempty"`
	Build      string   `json:"build,omitempty"`
	Exe        string   `json:"exe,omitempty"`
	Bench      uint64   `json:"bench,omitempty"`
	Repository string   `json:"repository,omitempty"`
	Branch     string   `json:"branch,omitempty"`
	Commit     string   `json:"commit,omitempty"`
	Message    string   `json:"message,omitempty"`
	Uploader   string   `json:"uploader"`
	CreatedAt  string   `json:"created_at,omitempty"`
	UsedBy     []string `json:"used_by"`
}

// engineListJSON is `engine list --json`: a list is an object.
type engineListJSON struct {
	Engines     []engineJSON `json:"engines"`
	BytesStored uint64       `json:"bytes_stored"`
}

func engineJSONOf(a *arbiterv1.Artifact) engineJSON {
	e := engineJSON{SHA256: a.GetSha256(), Name: a.GetName(), Kind: matchspec.ArtifactKindName(a.GetKind()), Size: a.GetSize(),
		Platform: a.GetPlatform(), Build: a.GetBuild(), Exe: a.GetExe(), Bench: a.GetBench(), Repository: a.GetRepository(),
		Branch: a.GetBranch(), Commit: a.GetCommit(), Message: a.GetMessage(), Uploader: a.GetUploader(), UsedBy: a.GetUsedBy()}
	if e.UsedBy == nil {
		e.UsedBy = []string{}
	}
	if t := a.GetCreatedAt(); t != nil {
		e.CreatedAt = t.AsTime().UTC().Format(time.RFC3339)
	}
	return e
}

func newEngineRmCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "rm SHA",
		Short: "Remove a stored engine (refused while a running test or tune uses it)",
		Args:  cobra.ExactArgs(1),
	}, "", func(r *clicmd.Call, args []string) error {
		if err := deleteArtifact(r, args[0], "remove engine"); err != nil {
			return err
		}
		fmt.Fprintf(r.Out, "engine %s removed\n", args[0])
		return nil
	})
}

// getArtifact fetches a stored engine or net by its hash or a prefix.
func getArtifact(r *clicmd.Call, ref string) (*arbiterv1.GetArtifactResponse, error) {
	return clicmd.Retried(r, func(ctx context.Context) (*arbiterv1.GetArtifactResponse, error) {
		return arbiterv1.NewArtifactServiceClient(r.C.Conn()).GetArtifact(ctx, &arbiterv1.GetArtifactRequest{Sha256: ref})
	})
}

// deleteArtifact removes a stored engine or net, asked once (a second
// ask after a lost answer would report it missing); op names the call in
// the error.
func deleteArtifact(r *clicmd.Call, sha string, op string) error {
	_, err := arbiterv1.NewArtifactServiceClient(r.C.Conn()).DeleteArtifact(r.Ctx, &arbiterv1.DeleteArtifactRequest{Sha256: sha})
	if err != nil {
		return r.Failed(op, err)
	}
	return nil
}

func benchText(n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func shortCommit(c string) string {
	if c == "" {
		return "-"
	}
	return c[:min(len(c), 10)]
}

func printArtifact(w io.Writer, a *arbiterv1.Artifact) {
	fmt.Fprintf(w, "sha256:     %s\nname:       %s\nkind:       %s\nsize:       %d bytes\n", a.GetSha256(), a.GetName(), matchspec.ArtifactKindName(a.GetKind()), a.GetSize())
	if a.GetPlatform() != "" {
		fmt.Fprintf(w, "platform:   %s\n", a.GetPlatform())
	}
	if a.GetBuild() != "" {
		fmt.Fprintf(w, "build:      %s (makes %s)\n", a.GetBuild(), matchspec.ArtifactExe(a.GetExe()))
	}
	fmt.Fprintf(w, "bench:      %s\n", benchText(a.GetBench()))
	if a.GetCommit() != "" {
		fmt.Fprintf(w, "commit:     %s %s\n", a.GetCommit(), a.GetMessage())
	}
	if a.GetRepository() != "" {
		fmt.Fprintf(w, "repository: %s\n", a.GetRepository())
	}
	if a.GetBranch() != "" {
		fmt.Fprintf(w, "branch:     %s\n", a.GetBranch())
	}
	fmt.Fprintf(w, "uploader:   %s\n", a.GetUploader())
	if a.GetCreatedAt() != nil {
		fmt.Fprintf(w, "stored:     %s\n", a.GetCreatedAt().AsTime().UTC().Format("2006-01-02 15:04:05Z"))
	}
	if len(a.GetUsedBy()) > 0 {
		fmt.Fprintf(w, "used by:    %s\n", strings.Join(a.GetUsedBy(), " "))
	}
}

// defaultEngineName names an upload after its file or directory, or a
// commit after its repository and ref ("tinyuci@deeper").
func defaultEngineName(path string) string {
	if git, ok := strings.CutPrefix(path, "git:"); ok {
		repo, ref, _ := strings.Cut(git, "@")
		if abs, err := filepath.Abs(repo); err == nil {
			repo = abs
		}
		if ref == "" {
			ref = "HEAD"
		}
		return filepath.Base(repo) + "@" + ref
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return filepath.Base(path)
}
