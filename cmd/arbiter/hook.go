package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/auth"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	"github.com/arbiter-chess/arbiter/client/clusterclient"
	"github.com/arbiter-chess/arbiter/client/jobreport"
	"github.com/arbiter-chess/arbiter/coordinator/httpapi"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

// envAPI names the coordinator's web address for commands that speak the
// JSON API.
const envAPI = "ARBITER_API"

// apiFlags are the flags of a command that calls the JSON API.
type apiFlags struct {
	api, token, tokenFile string
	jsonOut               bool
	up                    clicmd.ClientFlags
}

func (f *apiFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.api, "api", "", "the coordinator's web address, where /api/v1 is served (default: $"+envAPI+", else the arbiter up running here)")
	fl.StringVar(&f.token, "token", "", "credential (default: --token-file, else $"+auth.EnvToken+")")
	fl.StringVar(&f.tokenFile, "token-file", "", "read the credential from the first line of this file")
	fl.BoolVar(&f.jsonOut, "json", false, "print the API's JSON")
}

// do calls method path of the JSON API with body (JSON-encoded unless
// nil) and decodes a 2xx answer into out; an error answer becomes an
// error with the API's message.
func (f *apiFlags) do(method, path string, body, out any) error {
	base := f.api
	if base == "" {
		base = os.Getenv(envAPI)
	}
	if base == "" {
		base = strings.TrimRight(f.up.UpPages(), "/")
	}
	if base == "" {
		return usageError("--api: give the coordinator's web address (http://HOST:PORT of its --http), or set %s", envAPI)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("--api %s: want http://HOST:PORT or https://HOST", base)
	}
	tok, err := clusterclient.ResolveToken(f.token, f.tokenFile, os.Getenv)
	if err != nil {
		return usageError("%v", err)
	}
	if tok == "" {
		tok = f.up.UpToken()
	}
	if tok == "" {
		return usageError("no credential: pass --token or --token-file, or set %s", auth.EnvToken)
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, strings.TrimRight(base, "/")+httpapi.Prefix+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("%s: %v", base, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode/100 != 2 {
		var e httpapi.Error
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s", e.Error)
		}
		return fmt.Errorf("%s %s: HTTP %d", method, path, resp.StatusCode)
	}
	if out != nil && len(b) > 0 {
		switch o := out.(type) {
		case *[]byte:
			*o = b
		default:
			return json.Unmarshal(b, out)
		}
	}
	return nil
}

func newHookCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Webhooks: be told when a job finishes, fails or cannot progress",
		Long: `Webhooks send a signed POST when a job of yours (or, for an admin's
farm-wide hook, any job) finishes, fails or cannot progress: JSON with the
job and its result block, or a Discord or Slack message. These commands
speak the coordinator's JSON API at its web address. See docs/api.md.`,
	}
	cmd.AddCommand(newHookAddCommand(), newHookListCommand(), newHookRmCommand(), newHookDeliveriesCommand())
	return cmd
}

func newHookAddCommand() *cobra.Command {
	var f apiFlags
	var events []string
	var format string
	var farm, followed bool
	cmd := &cobra.Command{
		Use:   "add URL",
		Short: "Add a webhook; prints its secret, shown only now",
		Example: `  arbiter hook add https://bots.example.org/arbiter --events finished,failed
  arbiter hook add https://discord.com/api/webhooks/ID/TOKEN --events finished --format discord
  arbiter hook add https://bots.example.org/followed --events finished --followed`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var h httpapi.HookJSON
			if err := f.do("POST", "/hooks", httpapi.HookRequest{URL: args[0], Events: events, Format: format, Farm: farm, Followed: followed}, &h); err != nil {
				return fmt.Errorf("hook add: %w", err)
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				return json.NewEncoder(out).Encode(h)
			}
			fmt.Fprintf(out, "hook %s: %s on %s (%s, %s)\nsecret: %s\n", h.ID, h.URL, strings.Join(h.Events, ","), h.Format, h.Scope, h.Secret)
			fmt.Fprintln(out, "Keep the secret: each delivery carries X-Arbiter-Signature-256: sha256=HMAC-SHA256(secret, body). It is not shown again.")
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringSliceVar(&events, "events", []string{"finished", "failed"}, "events to send: finished, failed, blocked")
	cmd.Flags().StringVar(&format, "format", "json", "payload: json, discord or slack")
	cmd.Flags().BoolVar(&farm, "farm", false, "every job's events, not only yours (admins)")
	cmd.Flags().BoolVar(&followed, "followed", false, "the events of the jobs you follow on the web pages (Follow on a job's page), not of your own jobs")
	return cmd
}

func newHookListCommand() *cobra.Command {
	var f apiFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List your webhooks (an admin's: all)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var raw []byte
			if err := f.do("GET", "/hooks", nil, &raw); err != nil {
				return fmt.Errorf("hook list: %w", err)
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				_, err := out.Write(raw)
				return err
			}
			var l struct{ Hooks []httpapi.HookJSON }
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			if len(l.Hooks) == 0 {
				fmt.Fprintln(out, "No webhooks.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HOOK\tURL\tEVENTS\tFORMAT\tSCOPE\tOWNER\tCREATED")
			for _, h := range l.Hooks {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", h.ID, h.URL, strings.Join(h.Events, ","), h.Format, h.Scope, h.Owner, h.CreatedAt)
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	return cmd
}

func newHookRmCommand() *cobra.Command {
	var f apiFlags
	cmd := &cobra.Command{
		Use:   "rm HOOK",
		Short: "Remove a webhook and its deliveries",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.do("DELETE", "/hooks/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return fmt.Errorf("hook rm: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "hook %s removed\n", args[0])
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func newHookDeliveriesCommand() *cobra.Command {
	var f apiFlags
	var limit int
	cmd := &cobra.Command{
		Use:   "deliveries [HOOK]",
		Short: "List the deliveries of a webhook (or of all yours), newest first",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := "/deliveries"
			if len(args) == 1 {
				path = "/hooks/" + url.PathEscape(args[0]) + "/deliveries"
			}
			var raw []byte
			if err := f.do("GET", fmt.Sprintf("%s?limit=%d", path, limit), nil, &raw); err != nil {
				return fmt.Errorf("hook deliveries: %w", err)
			}
			out := cmd.OutOrStdout()
			if f.jsonOut {
				_, err := out.Write(raw)
				return err
			}
			var l struct{ Deliveries []httpapi.DeliveryJSON }
			if err := json.Unmarshal(raw, &l); err != nil {
				return err
			}
			if len(l.Deliveries) == 0 {
				fmt.Fprintln(out, "No deliveries.")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HOOK\tJOB\tEVENT\tSTATE\tATTEMPTS\tSTATUS\tERROR\tCREATED")
			for _, d := range l.Deliveries {
				status := "-"
				if d.LastStatus != 0 {
					status = fmt.Sprint(d.LastStatus)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", d.Hook, d.Job, d.Event, d.State, d.Attempts, status, orDash(d.LastError), d.CreatedAt)
			}
			return tw.Flush()
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&limit, "limit", 100, "most deliveries to list (1 to 1000)")
	return cmd
}

// jobJSON is a job in webhooks' payloads: as status --json prints it.
func jobJSON(j *arbiterv1.Job) any { return jobreport.NewJobJSON(j) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
