// SPDX-License-Identifier: Apache-2.0

// Package settings reads a program's configuration keys with viper from, highest first,
// command-line flags, the environment, a YAML file and the keys' defaults, into typed values.
// A Schema lists the keys; a Reader turns each into a Go value and records one FieldError per
// key that does not read. The edge and the coordinator each declare their keys and keep their
// own validation; what they share (kinds, flags, variables, the file, the typed reads, unknown
// keys and variables) lives here.
package settings
