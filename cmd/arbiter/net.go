package main

// `arbiter net upload|list|show|rm|default`: the nets a coordinator keeps
// for its workers. A net is an artifact of kind net (the engines' store,
// its chunked upload and its quotas): content-addressed by SHA-256, named
// nn-<sha12>.nnue unless told otherwise, attributed to its uploader. A
// test names one per engine (--engine ...,net=SHA); docs/nnue.md.

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/client/artifactclient"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newNetCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "net",
		Short: "Upload, list, show and remove the nets a coordinator sends to its workers, and set each engine's default net",
		Long: `Nets are stored like engines: by SHA-256 (the same bytes once), named
nn-<first 12 hex digits>.nnue unless the upload names them otherwise, with
who uploaded them. In a test an engine takes net=SHA
(or net=FILE, uploaded first, or net=default for its name's default net);
the workers fetch the net, check its hash, and pass its path in the
engine's EvalFile option (net-option=NAME for another). docs/nnue.md.`,
	}
	cmd.AddCommand(newNetUploadCommand(), newNetListCommand(), newNetShowCommand(), newNetRmCommand(), newNetDefaultCommand(), newNetLoopCommand())
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

func newNetUploadCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var name, engine string
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
			return f.Call(cmd, func(r *clicmd.Call) error {
				a, err := artifactclient.Upload(r.Ctx, r.C.Conn(), p, cmd.ErrOrStderr())
				if err != nil {
					return r.Failed("upload net", err)
				}
				return callPrintNet(r, a)
			})
		},
	}
	f.Add(cmd.Flags())
	cmd.Flags().StringVar(&name, "name", "", "the net's name (default nn-<sha12>.nnue)")
	cmd.Flags().StringVar(&engine, "engine", "", "the engine the net is for")
	f.AddJSON(cmd.Flags(), "print the net as JSON (docs/json.md)")
	return cmd
}

// listNets fetches the stored nets, newest first.
func listNets(r *clicmd.Call, limit uint32) (*arbiterv1.ListArtifactsResponse, error) {
	return clicmd.Retried(r, func(ctx context.Context) (*arbiterv1.ListArtifactsResponse, error) {
		return arbiterv1.NewArtifactServiceClient(r.C.Conn()).ListArtifacts(ctx, &arbiterv1.ListArtifactsRequest{Limit: limit,
			Kind: arbiterv1.ArtifactKind_ARTIFACT_KIND_NET})
	})
}

func newNetListCommand() *cobra.Command {
	var limit uint32
	var engine string
	cmd := clicmd.NewClientCommand(&cobra.Command{
		Use:   "list",
		Short: "List the stored nets, newest first",
		Args:  cobra.NoArgs,
	}, "print {\"nets\": [...], \"bytes_stored\": N} (docs/json.md)", func(r *clicmd.Call, _ []string) error {
		resp, err := listNets(r, limit)
		if err != nil {
			return r.Failed("list nets", err)
		}
		nets := slices.DeleteFunc(resp.GetArtifacts(), func(a *arbiterv1.Artifact) bool {
			return engine != "" && a.GetEngine() != engine && !slices.Contains(a.GetDefaultFor(), engine)
		})
		out := struct {
			Nets        []netJSON `json:"nets"`
			BytesStored uint64    `json:"bytes_stored"`
		}{Nets: []netJSON{}, BytesStored: resp.GetBytesStored()}
		for _, a := range nets {
			out.Nets = append(out.Nets, netToJSON(a))
		}
		return r.Print(out, func(w io.Writer) error {
			tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "SHA256\tNAME\tENGINE\tSIZE\tDEFAULT FOR\tUPLOADER\tUSED BY")
			for _, a := range nets {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", a.GetSha256()[:12], a.GetName(), dash(a.GetEngine()), a.GetSize(),
					dash(strings.Join(a.GetDefaultFor(), " ")), a.GetUploader(), strings.Join(a.GetUsedBy(), " "))
			}
			tw.Flush()
			fmt.Fprintf(w, "%d nets, %d bytes stored\n", len(nets), resp.GetBytesStored())
			return nil
		})
	})
	cmd.Flags().Uint32Var(&limit, "limit", 100, "at most this many")
	cmd.Flags().StringVar(&engine, "engine", "", "only the nets of this engine (or its default)")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// getNet fetches a stored net by its hash or a prefix; an engine is not one.
func getNet(r *clicmd.Call, ref string) (*arbiterv1.Artifact, error) {
	resp, err := getArtifact(r, ref)
	if err != nil {
		return nil, r.Failed("show net", err)
	}
	if a := resp.GetArtifact(); a.GetKind() != arbiterv1.ArtifactKind_ARTIFACT_KIND_NET {
		return nil, usageError("artifact %s is an engine, not a net (arbiter engine show)", a.GetSha256()[:12])
	}
	return resp.GetArtifact(), nil
}

func newNetShowCommand() *cobra.Command {
	return newOneNetCommand("show SHA", "Show a stored net (by its SHA-256 or a prefix of 8+ hex digits)",
		"print the net as JSON (docs/json.md)", callPrintNet)
}

// newOneNetCommand is a command on one stored net, named by its SHA-256
// or a prefix: act is given the net once fetched (an engine is refused).
func newOneNetCommand(use, short, jsonHelp string, act func(r *clicmd.Call, a *arbiterv1.Artifact) error) *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1)}, jsonHelp,
		func(r *clicmd.Call, args []string) error {
			a, err := getNet(r, args[0])
			if err != nil {
				return err
			}
			return act(r, a)
		})
}

func newNetRmCommand() *cobra.Command {
	return newOneNetCommand("rm SHA", "Remove a stored net (refused while a running test uses it; it stops being any engine's default)",
		"print {\"sha256\": ..., \"removed\": true} (docs/json.md)", func(r *clicmd.Call, a *arbiterv1.Artifact) error {
			if err := deleteArtifact(r, a.GetSha256(), "remove net"); err != nil {
				return err
			}
			return r.Print(map[string]any{"sha256": a.GetSha256(), "removed": true}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "net %s (%s) removed\n", a.GetSha256()[:12], a.GetName())
				return err
			})
		})
}

func newNetDefaultCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var clear bool
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
			return f.Call(cmd, func(r *clicmd.Call) error {
				var net *arbiterv1.Artifact
				switch {
				case len(args) == 2 || clear:
					ref := ""
					if !clear {
						ref = args[1]
					}
					resp, err := arbiterv1.NewArtifactServiceClient(r.C.Conn()).SetDefaultNet(r.Ctx, &arbiterv1.SetDefaultNetRequest{Engine: engine, Sha256: ref})
					if err != nil {
						return r.Failed("set default net", err)
					}
					net = resp.GetArtifact()
				default:
					resp, err := listNets(r, 0)
					if err != nil {
						return r.Failed("list nets", err)
					}
					for _, a := range resp.GetArtifacts() {
						if slices.Contains(a.GetDefaultFor(), engine) {
							net = a
						}
					}
				}
				out := map[string]any{"engine": engine, "net": nil}
				if net != nil {
					out["net"] = netToJSON(net)
				}
				return r.Print(out, func(w io.Writer) error {
					if net == nil {
						fmt.Fprintf(w, "engine %s: no default net\n", engine)
						return nil
					}
					fmt.Fprintf(w, "engine %s: default net %s (%s)\n", engine, net.GetSha256()[:12], net.GetName())
					return nil
				})
			})
		},
	}
	f.Add(cmd.Flags())
	cmd.Flags().BoolVar(&clear, "clear", false, "clear the engine's default net")
	f.AddJSON(cmd.Flags(), "print {\"engine\": ..., \"net\": {...} or null} (docs/json.md)")
	return cmd
}

// callPrintNet prints a net as r's answer: as JSON with --json, else
// field by field.
func callPrintNet(r *clicmd.Call, a *arbiterv1.Artifact) error {
	return r.Print(netToJSON(a), func(w io.Writer) error {
		printNet(w, a)
		return nil
	})
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
