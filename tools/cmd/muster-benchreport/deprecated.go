// SPDX-License-Identifier: Apache-2.0

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

// oldNames holds the names --choria-provisioner and $MUSTER_CHORIA_PROVISIONER_BIN had before
// they said what they name; they are accepted, with a warning, for one release and then go.
type oldNames struct {
	flag *string
	env  string
}

// deprecatedNames registers the old flag on fs and reads the old variable.
func deprecatedNames(fs *flag.FlagSet) oldNames {
	return oldNames{
		flag: fs.String("anchor", "", "deprecated: use --choria-provisioner"),
		env:  os.Getenv("MUSTER_ANCHOR_BIN"),
	}
}

// apply fills bin from an old name when the new flag and variable left it empty: the old flag
// first, then the old variable.
func (o oldNames) apply(fs *flag.FlagSet, bin *string, warn io.Writer) {
	if *o.flag != "" {
		fmt.Fprintln(warn, "--anchor is deprecated and goes in the next release: use --choria-provisioner")
		if !isSet(fs, "choria-provisioner") {
			*bin = *o.flag
		}
	}
	if *bin == "" && !isSet(fs, "choria-provisioner") && o.env != "" {
		fmt.Fprintln(warn, "MUSTER_ANCHOR_BIN is deprecated and goes in the next release: use MUSTER_CHORIA_PROVISIONER_BIN")
		*bin = o.env
	}
}

// isSet reports whether the command line gave the flag named name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
