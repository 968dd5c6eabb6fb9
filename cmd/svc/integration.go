package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/svc-framework/svc/config"
	"github.com/svc-framework/svc/db"
	"github.com/svc-framework/svc/integration"
)

// integrationCmd is `svc integration …`: maintenance of the integration module's data.
func integrationCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "integration", Short: "Maintain the integration module's data"}
	var from, to, fromAlg, toAlg string
	rotate := &cobra.Command{
		Use:   "rotate-key --from OLD --to NEW",
		Short: "Re-encrypt every stored integration secret from one key to another, in one transaction",
		Long: "Re-encrypts the secrets of every itg_system row (sensitive auth params and data-source\n" +
			"passwords) from --from to --to in one transaction: all rows or none. Keys are standard\n" +
			"base64; an empty --from reads plaintext values, an empty --to stores plaintext. The\n" +
			"algorithms default to svc.integration.secret_algorithm. Set the new key in the\n" +
			"configuration before restarting the servers.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := load(g, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			alg := func(a string) config.SecretAlgorithm {
				if a == "" {
					return cfg.Integration.SecretAlgorithm
				}
				return config.SecretAlgorithm(a)
			}
			oldKey, err := integration.NewSecrets(from, alg(fromAlg))
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			newKey, err := integration.NewSecrets(to, alg(toAlg))
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			d, err := db.Open(cmd.Context(), config.PrimaryDataSource, cfg.DataSources[config.PrimaryDataSource])
			if err != nil {
				return err
			}
			defer d.Close()
			n, err := integration.RotateKey(cmd.Context(), d, oldKey, newKey)
			if err != nil {
				return fmt.Errorf("rotate-key: nothing changed: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "re-encrypted the secrets of %d systems\n", n)
			return nil
		},
	}
	rotate.Flags().StringVar(&from, "from", "", "the current key (standard base64; empty: values are plaintext)")
	rotate.Flags().StringVar(&to, "to", "", "the new key (standard base64; empty: store plaintext)")
	rotate.Flags().StringVar(&fromAlg, "from-algorithm", "", "aes or sm4 (default svc.integration.secret_algorithm)")
	rotate.Flags().StringVar(&toAlg, "to-algorithm", "", "aes or sm4 (default svc.integration.secret_algorithm)")
	c.AddCommand(rotate)
	return c
}
