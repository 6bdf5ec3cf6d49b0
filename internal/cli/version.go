package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/version"
)

func newVersionCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ork's version, commit and build date",
		Long: `Print ork's version, commit and build date. A release build carries them from the linker; a
binary from ` + "`go install github.com/orkspace/ork/cmd/ork@vX.Y.Z`" + ` reports that module version, and
one built from a checkout the commit and its time. -o json and -o yaml add goVersion (the Go
toolchain that built ork) and platform (GOOS/GOARCH).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := outputFormat(env.Config(), output.Text, output.JSON, output.YAML)
			if err != nil {
				return err
			}
			info := version.Get()
			switch format {
			case output.JSON:
				return output.WriteJSON(env.Streams.Out, info)
			case output.YAML:
				return output.WriteYAML(env.Streams.Out, info)
			}
			_, err = fmt.Fprintf(env.Streams.Out, "ork %s (commit %s, built %s)\n",
				info.Version, orUnknown(info.Commit), orUnknown(info.Date))
			return err
		},
	}
	addOutputFlag(cmd, output.Text, output.Text, output.JSON, output.YAML)
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
