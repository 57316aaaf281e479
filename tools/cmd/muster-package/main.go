// SPDX-License-Identifier: Apache-2.0

// Command muster-package writes the .deb and .rpm packages of muster-coordinator and
// muster-edge (tools/packaging) from the binaries of make build:
//
//	muster-package --root . --bin bin --out dist            # what make packages runs
//	muster-package --root . --bin bin --out dist --version 1.2.0
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/seed96588659/muster/tools/packaging"
)

func main() {
	var opts packaging.Options
	flag.StringVar(&opts.Root, "root", ".", "the repository (deploy/, docs/, LICENSE)")
	flag.StringVar(&opts.Bin, "bin", "bin", "directory holding muster-coordinator and muster-edge")
	flag.StringVar(&opts.Out, "out", "dist", "directory the packages are written to")
	flag.StringVar(&opts.Version, "version", "", "package version (default: from the binaries' build info)")
	flag.Parse()
	arts, err := packaging.Build(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "muster-package:", err)
		os.Exit(1)
	}
	for _, a := range arts {
		fmt.Println(a.Path)
	}
}
