package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-chess/arbiter/base/certs"
	"github.com/arbiter-chess/arbiter/client/clicmd"
)

func newCertsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Make a farm's TLS certificates: a CA, the coordinator's, one per worker",
		Long: `A small private PKI for one farm, in one directory:

  DIR/ca.pem, DIR/ca-key.pem              the CA (ECDSA P-256, 10 years; keep the key offline)
  DIR/coordinator/{cert,key,ca}.pem       the coordinator's server certificate (1 year)
  DIR/workers/NAME/{cert,key,ca}.pem      worker NAME's client certificate (1 year)

arbiter coordinator serves them with --tls-cert, --tls-key and
--tls-client-ca; arbiter worker connects with --ca, --cert and --key and
no token, and is the identity cert:NAME. Clients with a token (arbiter
status, ...) need only --ca. Keys are written 0600. Existing files are checked and kept; a
coordinator or worker certificate within 30 days of its end is renewed
(same CA, name and hosts: restart its process to load it). To issue one
again otherwise (e.g. other hosts), remove its cert.pem and key.pem.`,
	}
	cmd.AddCommand(newCertsInitCommand(), newCertsWorkerCommand())
	return cmd
}

func newCertsInitCommand() *cobra.Command {
	var dir string
	var hosts, workers []string
	cmd := &cobra.Command{
		Use:   "init --dir DIR --host NAME[,NAME...]",
		Short: "Make (or keep) the CA and the coordinator's certificate",
		Example: `  arbiter certs init --dir ./pki --host coordinator,localhost,127.0.0.1
  arbiter certs init --dir /etc/arbiter/tls --host coordinator --worker worker-1,worker-2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkDir(dir); err != nil {
				return err
			}
			if _, err := certs.CheckHosts(hosts); err != nil {
				return usageError("--%v", err)
			}
			for _, w := range workers {
				if err := certs.CheckName(w); err != nil {
					return usageError("--worker: %v", err)
				}
			}
			p := certs.PKI{Dir: dir}
			issued, err := p.Init(hosts)
			if err != nil {
				return failure("%v", err)
			}
			for _, w := range workers {
				is, err := p.Worker(w)
				if err != nil {
					return failure("%v", err)
				}
				issued = append(issued, is)
			}
			printIssued(cmd.OutOrStdout(), issued)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "dir", "", "directory of the farm's certificates (made if missing)")
	fl.StringSliceVar(&hosts, "host", nil, "DNS names and IP addresses clients dial the coordinator by (comma-separated or repeated)")
	fl.StringSliceVar(&workers, "worker", nil, "also make client certificates for these workers (as certs worker does)")
	return cmd
}

func newCertsWorkerCommand() *cobra.Command {
	var dir, name string
	cmd := &cobra.Command{
		Use:     "worker --dir DIR --name NAME",
		Short:   "Make (or keep) a worker's client certificate, signed by the CA in DIR",
		Example: `  arbiter certs worker --dir ./pki --name farm-07`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkDir(dir); err != nil {
				return err
			}
			if name == "" {
				return clicmd.Required("name", "the worker's name; it becomes the identity cert:NAME")
			}
			if err := certs.CheckName(name); err != nil {
				return usageError("--name: %v", err)
			}
			is, err := certs.PKI{Dir: dir}.Worker(name)
			if err != nil {
				return failure("%v", err)
			}
			printIssued(cmd.OutOrStdout(), []certs.Issued{is})
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "directory of the farm's certificates (where certs init made the CA)")
	cmd.Flags().StringVar(&name, "name", "", "worker name: 1 to 64 letters, digits, '.', '_' or '-'")
	return cmd
}

func checkDir(dir string) error {
	if strings.TrimSpace(dir) == "" {
		return clicmd.Required("dir", "the directory of the farm's certificates")
	}
	return nil
}

// printIssued prints one line per certificate: made or kept, where, until
// when, and for a server certificate the names it is valid for.
func printIssued(w io.Writer, issued []certs.Issued) {
	for _, is := range issued {
		verb := "kept   "
		switch {
		case is.Created:
			verb = "created"
		case is.Renewed:
			verb = "renewed"
		}
		line := fmt.Sprintf("%s %-18s %s (key %s), valid until %s", verb, is.What, is.CertPath, is.KeyPath, is.NotAfter.UTC().Format(time.DateOnly))
		if len(is.Hosts) > 0 {
			line += ", for " + strings.Join(is.Hosts, ",")
		}
		fmt.Fprintln(w, line)
	}
}
