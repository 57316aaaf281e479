// SPDX-License-Identifier: Apache-2.0

// Package config loads a coordinator member's configuration with viper: a YAML file, MUSTER_*
// environment variables and command-line flags, in the order flags > environment > file > defaults.
// Every value is checked at start, and a bad one is refused with its key and the reason.
package config
