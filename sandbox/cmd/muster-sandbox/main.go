// SPDX-License-Identifier: Apache-2.0

// Command muster-sandbox runs a local Choria fleet for Muster's tests, benchmarks and `make run`.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "muster-sandbox:", err)
		os.Exit(1)
	}
}
