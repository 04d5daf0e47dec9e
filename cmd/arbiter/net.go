package main

// `arbiter net upload|list|show|rm|default`: the nets a coordinator keeps
// for its workers. A net is an artifact of kind net (the engines' store,
// its chunked upload and its quotas): content-addressed by SHA-256, named
// nn-<sha12>.nnue unless told otherwise, attributed to its uploader. A
// test names one per engine (--engine ...,net=SHA); docs/nnue.md.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/internal/artifactclient"
	"github.com/arbiter-chess/arbiter/internal/clusterclient"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newNetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "net",
		Short: "Upload, list, show and remove the nets a coordinator sends to its workers, and set each engine's default net",
		Long: `Nets are stored like engines: by SHA-256 (the same bytes once), named
nn-<first 12 hex digits>.nnue unless the upload names them otherwise, with
who uploaded them. In a test (submit sprt|match) an engine takes net=SHA
(or net=FILE, uploaded first, or net=default for its name's default net);
the workers fetch the net, check its hash, and pass its path in the
engine's EvalFile option (net-option=NAME for another). docs/nnue.md.`,
	}
	cmd.AddCommand(newNetUploadCommand(), newNetListCommand(), newNetShowCommand(), newNetRmCommand(), newNetDefaultCommand())
	return cmd
}

// netJSON is a net in --json output (docs/json.md).
type netJSON struct {
	SHA256     string   `json:"sha256"`
	Name       string   `json:"name"`
	Engine     string   `json:"engine"`
	Size       uint64   `json:"size"`
	Uploader   string   `json:"uploader"`
	CreatedAt  string   `json:"created_at,omitempty"`
	DefaultFor []string `json:"default_for"`
	UsedBy     []string `json:"used_by"`
}

func netToJSON(a *arbiterv1.Artifact) netJSON {
	n := netJSON{SHA256: a.GetSha256(), Name: a.GetName(), Engine: a.GetEngine(), Size: a.GetSize(), Uploader: a.GetUploader(),
		DefaultFor: a.GetDefaultFor(), UsedBy: a.GetUsedBy()}
	if a.GetCreatedAt() != nil {
		n.CreatedAt = a.GetCreatedAt().AsTime().UTC().Format(time.RFC3339)
	}
	if n.DefaultFor == nil {
		n.DefaultFor = []string{}
	}
	if n.UsedBy == nil {
		n.UsedBy = []string{}
	}
	return n
}

func writeJSON(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }

func newNetUploadCommand() *cobra.Command {
	var f clientFlags
	var name, engine string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "upload FILE",
		Short: "Upload a net file (stored once, whoever uploads it again)",
		Example: `  arbiter net upload net-1.nnue --engine arbiter
  arbiter net upload ./nets/big.nnue --name big-v2.nnue --engine dev --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := artifactclient.PackNet(args[0], name, engine)
			if err != nil {
				return usageError("%v", err)
			}
			defer p.Close()
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			a, err := artifactclient.Upload(ctx, c.Conn(), p, cmd.ErrOrStderr())
			if err != nil {
				return callError(c, "upload net", err)
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), netToJSON(a))
			}
			printNet(cmd.OutOrStdout(), a)
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().StringVar(&name, "name", "", "the net's name (default nn-<sha12>.nnue)")
	cmd.Flags().StringVar(&engine, "engine", "", "the engine the net is for")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the net as JSON (docs/json.md)")
	return cmd
}

// listNets fetches the stored nets, newest first.
func listNets(ctx context.Context, c *clusterclient.Client, limit uint32) (*arbiterv1.ListArtifactsResponse, error) {
	var resp *arbiterv1.ListArtifactsResponse
	err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = arbiterv1.NewArtifactServiceClient(c.Conn()).ListArtifacts(ctx, &arbiterv1.ListArtifactsRequest{Limit: limit,
			Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET})
		return err
	})
	return resp, err
}

func newNetListCommand() *cobra.Command {
	var f clientFlags
	var limit uint32
	var engine string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the stored nets, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			resp, err := listNets(ctx, c, limit)
			if err != nil {
				return callError(c, "list nets", err)
			}
			nets := slices.DeleteFunc(resp.GetArtifacts(), func(a *arbiterv1.Artifact) bool {
				return engine != "" && a.GetEngine() != engine && !slices.Contains(a.GetDefaultFor(), engine)
			})
			if jsonOut {
				out := struct {
					Nets        []netJSON `json:"nets"`
					BytesStored uint64    `json:"bytes_stored"`
				}{Nets: []netJSON{}, BytesStored: resp.GetBytesStored()}
				for _, a := range nets {
					out.Nets = append(out.Nets, netToJSON(a))
				}
				return writeJSON(cmd.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "SHA256\tNAME\tENGINE\tSIZE\tDEFAULT FOR\tUPLOADER\tUSED BY")
			for _, a := range nets {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", a.GetSha256()[:12], a.GetName(), dash(a.GetEngine()), a.GetSize(),
					dash(strings.Join(a.GetDefaultFor(), " ")), a.GetUploader(), strings.Join(a.GetUsedBy(), " "))
			}
			tw.Flush()
			fmt.Fprintf(cmd.OutOrStdout(), "%d nets, %d bytes stored\n", len(nets), resp.GetBytesStored())
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().Uint32Var(&limit, "limit", 100, "at most this many")
	cmd.Flags().StringVar(&engine, "engine", "", "only the nets of this engine (or its default)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print {\"nets\": [...], \"bytes_stored\": N} (docs/json.md)")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// getNet fetches a stored net by its hash or a prefix; an engine is not one.
func getNet(ctx context.Context, c *clusterclient.Client, ref string) (*arbiterv1.Artifact, error) {
	var resp *arbiterv1.GetArtifactResponse
	err := clusterclient.Do(ctx, clusterclient.Interactive, func(ctx context.Context) (err error) {
		resp, err = arbiterv1.NewArtifactServiceClient(c.Conn()).GetArtifact(ctx, &arbiterv1.GetArtifactRequest{Sha256: ref})
		return err
	})
	if err != nil {
		return nil, callError(c, "show net", err)
	}
	if a := resp.GetArtifact(); a.GetKind() != arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
		return nil, usageError("artifact %s is an engine, not a net (arbiter engine show)", a.GetSha256()[:12])
	}
	return resp.GetArtifact(), nil
}

func newNetShowCommand() *cobra.Command {
	var f clientFlags
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "show SHA",
		Short: "Show a stored net (by its SHA-256 or a prefix of 8+ hex digits)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			a, err := getNet(ctx, c, args[0])
			if err != nil {
				return err
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), netToJSON(a))
			}
			printNet(cmd.OutOrStdout(), a)
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the net as JSON (docs/json.md)")
	return cmd
}

func newNetRmCommand() *cobra.Command {
	var f clientFlags
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "rm SHA",
		Short: "Remove a stored net (refused while a running test uses it; it stops being any engine's default)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			a, err := getNet(ctx, c, args[0])
			if err != nil {
				return err
			}
			_, err = arbiterv1.NewArtifactServiceClient(c.Conn()).DeleteArtifact(ctx, &arbiterv1.DeleteArtifactRequest{Sha256: a.GetSha256()})
			if err != nil {
				return callError(c, "remove net", err)
			}
			if jsonOut {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"sha256": a.GetSha256(), "removed": true})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "net %s (%s) removed\n", a.GetSha256()[:12], a.GetName())
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print {\"sha256\": ..., \"removed\": true} (docs/json.md)")
	return cmd
}

func newNetDefaultCommand() *cobra.Command {
	var f clientFlags
	var clear, jsonOut bool
	cmd := &cobra.Command{
		Use:   "default ENGINE [SHA]",
		Short: "Show, set (SHA) or clear the default net of an engine name (a test's net=default)",
		Example: `  arbiter net default dev 3f2a9c01be77
  arbiter net default dev
  arbiter net default dev --clear`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			engine := args[0]
			if clear && len(args) == 2 {
				return usageError("--clear takes no SHA")
			}
			ctx, c, done, err := f.session()
			if err != nil {
				return err
			}
			defer done()
			var net *arbiterv1.Artifact
			switch {
			case len(args) == 2 || clear:
				ref := ""
				if !clear {
					ref = args[1]
				}
				resp, err := arbiterv1.NewArtifactServiceClient(c.Conn()).SetDefaultNet(ctx, &arbiterv1.SetDefaultNetRequest{Engine: engine, Sha256: ref})
				if err != nil {
					return callError(c, "set default net", err)
				}
				net = resp.GetArtifact()
			default:
				resp, err := listNets(ctx, c, 0)
				if err != nil {
					return callError(c, "list nets", err)
				}
				for _, a := range resp.GetArtifacts() {
					if slices.Contains(a.GetDefaultFor(), engine) {
						net = a
					}
				}
			}
			if jsonOut {
				out := map[string]any{"engine": engine, "net": nil}
				if net != nil {
					out["net"] = netToJSON(net)
				}
				return writeJSON(cmd.OutOrStdout(), out)
			}
			if net == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "engine %s: no default net\n", engine)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "engine %s: default net %s (%s)\n", engine, net.GetSha256()[:12], net.GetName())
			return nil
		},
	}
	f.add(cmd.Flags())
	cmd.Flags().BoolVar(&clear, "clear", false, "clear the engine's default net")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print {\"engine\": ..., \"net\": {...} or null} (docs/json.md)")
	return cmd
}

func printNet(w io.Writer, a *arbiterv1.Artifact) {
	fmt.Fprintf(w, "sha256:      %s\nname:        %s\nengine:      %s\nsize:        %d bytes\n", a.GetSha256(), a.GetName(), dash(a.GetEngine()), a.GetSize())
	if len(a.GetDefaultFor()) > 0 {
		fmt.Fprintf(w, "default for: %s\n", strings.Join(a.GetDefaultFor(), " "))
	}
	fmt.Fprintf(w, "uploader:    %s\n", a.GetUploader())
	if a.GetCreatedAt() != nil {
		fmt.Fprintf(w, "stored:      %s\n", a.GetCreatedAt().AsTime().UTC().Format("2006-01-02 15:04:05Z"))
	}
	if len(a.GetUsedBy()) > 0 {
		fmt.Fprintf(w, "used by:     %s\n", strings.Join(a.GetUsedBy(), " "))
	}
}
