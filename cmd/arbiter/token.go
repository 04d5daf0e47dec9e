package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/identity"
	"github.com/arbiter-chess/arbiter/client/clicmd"
	arbiterv1 "github.com/arbiter-chess/arbiter/proto/arbiter/v1"
)

func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke per-identity credentials (admin)",
		Long: `Every caller of a coordinator is an identity with a role: admin (everything,
including credentials), client (submit, cancel, read, download) or worker
(register, lease, heartbeat, submit results). The --token of
arbiter coordinator is the bootstrap admin credential; create one
credential per person and per worker machine with it, and revoke one
without touching the others.
Tokens are stored hashed and shown once, at creation.`,
	}
	cmd.AddCommand(newTokenCreateCommand(), newTokenListCommand(), newTokenRevokeCommand())
	return cmd
}

func newTokenCreateCommand() *cobra.Command {
	var f clicmd.ClientFlags
	var name, role string
	cmd := &cobra.Command{
		Use:   "create --name NAME --role admin|client|worker",
		Short: "Create a credential and print its token (shown once)",
		Example: `  arbiter token create --name alice --role client
  arbiter token create --name farm-07 --role worker --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return clicmd.Required("name", "the identity's name")
			}
			if _, err := identity.ParseRole(role); err != nil {
				return usageError("--role: %v", err)
			}
			return f.Call(cmd, func(r *clicmd.Call) error {
				resp, err := r.C.Admin.CreateCredential(r.Ctx, &arbiterv1.CreateCredentialRequest{Name: name, Role: role})
				if err != nil {
					return r.Failed("token create", err)
				}
				return r.Print(map[string]string{"name": name, "role": role, "token": resp.GetToken()}, func(w io.Writer) error {
					fmt.Fprintln(w, resp.GetToken())
					fmt.Fprintf(cmd.ErrOrStderr(), "credential %s (%s) created; store the token now, it is not shown again\n", name, role)
					return nil
				})
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "identity name: 1 to 64 letters, digits, '.', '_' or '-'")
	fl.StringVar(&role, "role", "", "admin, client or worker")
	f.AddJSON(fl, "print name, role and token as JSON (docs/json.md)")
	f.Add(fl)
	return cmd
}

func newTokenListCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "list",
		Short: "List credentials (never their tokens)",
		Args:  cobra.NoArgs,
	}, "print {\"credentials\": [...]} (docs/json.md)", func(r *clicmd.Call, _ []string) error {
		resp, err := r.C.Admin.ListCredentials(r.Ctx, &arbiterv1.ListCredentialsRequest{})
		if err != nil {
			return r.Failed("token list", err)
		}
		type row struct {
			Name      string `json:"name"`
			Role      string `json:"role"`
			CreatedAt string `json:"created_at"`
			CreatedBy string `json:"created_by"`
			RevokedAt string `json:"revoked_at,omitempty"`
		}
		rows := []row{}
		for _, cr := range resp.GetCredentials() {
			rw := row{Name: cr.GetName(), Role: cr.GetRole(), CreatedAt: cr.GetCreatedAt().AsTime().Format(time.RFC3339), CreatedBy: cr.GetCreatedBy()}
			if cr.GetRevokedAt() != nil {
				rw.RevokedAt = cr.GetRevokedAt().AsTime().Format(time.RFC3339)
			}
			rows = append(rows, rw)
		}
		credentials := struct {
			Credentials []row `json:"credentials"`
		}{rows}
		return r.Print(credentials, func(w io.Writer) error {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tROLE\tCREATED\tBY\tREVOKED")
			for _, rw := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", rw.Name, rw.Role, rw.CreatedAt, rw.CreatedBy, rw.RevokedAt)
			}
			return tw.Flush()
		})
	})
}

func newTokenRevokeCommand() *cobra.Command {
	return clicmd.NewClientCommand(&cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke a credential at once",
		Args:  clicmd.OneArg("NAME", "a credential's name; arbiter token list lists them"),
	}, "", func(r *clicmd.Call, args []string) error {
		if _, err := r.C.Admin.RevokeCredential(r.Ctx, &arbiterv1.RevokeCredentialRequest{Name: args[0]}); err != nil {
			return r.Failed("token revoke", err)
		}
		fmt.Fprintf(r.Out, "credential %s revoked\n", args[0])
		return nil
	})
}
