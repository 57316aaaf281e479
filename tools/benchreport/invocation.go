// SPDX-License-Identifier: Apache-2.0

package benchreport

import "strings"

// Invocation is one `go test -bench` process of a report, run from Module (a directory of the
// repository) with Env added to the Makefile's environment.
type Invocation struct {
	Module string
	// Env holds KEY=value pairs, printed in the command in this order.
	Env       []string
	Package   string
	Bench     string
	BenchTime string
	Timeout   string
}

// Args are go's arguments: the benchmarks only, no tests.
func (i Invocation) Args() []string {
	return []string{"test", "-run", "^$", "-bench", i.Bench, "-benchtime", i.BenchTime, "-timeout", i.Timeout, i.Package}
}

// Command is the shell command that runs the invocation from the repository's root.
func (i Invocation) Command() string {
	words := []string{"cd", i.Module, "&&"}
	for _, kv := range i.Env {
		words = append(words, shellQuote(kv))
	}
	words = append(words, "go")
	for _, a := range i.Args() {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// shellQuote leaves a word that a shell reads as itself alone and single-quotes any other.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
