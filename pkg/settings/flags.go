// SPDX-License-Identifier: Apache-2.0

package settings

import (
	"fmt"

	"github.com/spf13/pflag"
)

// DeclareFlags declares on fs --config and one flag per key that has one. Their defaults are
// shown, not applied: only a flag given on the command line overrides the environment and the
// file. A value is kept as given and read with the key's other sources, so a bad one is refused
// naming the key.
func (s *Schema) DeclareFlags(fs *pflag.FlagSet) {
	fs.String(FlagConfig, "", "YAML configuration file (env "+s.EnvName(FlagConfig)+")")
	for _, k := range s.Keys {
		if k.Flag == "" || k.Secret {
			continue
		}
		usage := fmt.Sprintf("%s (key %s, env %s)", k.Usage, k.Name, s.EnvName(k.Name))
		switch k.Kind {
		case Bool:
			def, _ := k.Default.(bool)
			fs.Bool(k.Flag, def, usage)
		case List:
			fs.StringSlice(k.Flag, nil, usage)
		default:
			fs.Var(&textFlag{value: text(k.Default), kind: k.Kind}, k.Flag, usage)
		}
	}
}

// text is a default as a flag shows it.
func text(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// textFlag keeps a flag's value as given; its type names the key's kind in the help.
type textFlag struct {
	value string
	kind  Kind
}

func (f *textFlag) String() string { return f.value }

func (f *textFlag) Set(s string) error {
	f.value = s
	return nil
}

func (f *textFlag) Type() string {
	switch f.kind {
	case Int:
		return "int"
	case Duration:
		return "duration"
	}
	return "string"
}
