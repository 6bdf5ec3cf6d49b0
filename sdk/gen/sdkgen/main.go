// Command sdkgen writes the reconciler SDKs' wire types from the embedded schema/*.json:
// go generate ./sdk/... runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/orkspace/ork/sdk/gen"
)

func main() {
	goOut := flag.String("go", "", "write the Go SDK's types to this file")
	pyOut := flag.String("python", "", "write the Python SDK's types to this file")
	tsOut := flag.String("ts", "", "write the TypeScript SDK's types to this file")
	flag.Parse()
	if err := run(*goOut, *pyOut, *tsOut); err != nil {
		fmt.Fprintln(os.Stderr, "sdkgen:", err)
		os.Exit(1)
	}
}

func run(goOut, pyOut, tsOut string) error {
	m, err := gen.Load()
	if err != nil {
		return err
	}
	for _, out := range []struct {
		path  string
		write func(*gen.Model) ([]byte, error)
	}{{goOut, gen.Go}, {pyOut, gen.Python}, {tsOut, gen.TypeScript}} {
		if out.path == "" {
			continue
		}
		data, err := out.write(m)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out.path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
