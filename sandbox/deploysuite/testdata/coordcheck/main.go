// SPDX-License-Identifier: Apache-2.0

// Command coordcheck exposes the coordinator's real configuration loader to deploysuite, which
// lives in the sandbox module (it does not require the coordinator module): the test copies this
// file into a throwaway module that replaces the coordinator with the checkout and runs it.
//
//	coordcheck keys         every key's name, default, flag and environment variable (JSON)
//	coordcheck load FILE    loads FILE with the process environment through config.Load (JSON)
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/coordinator/config"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "coordcheck:", err)
		os.Exit(1)
	}
}

type keyInfo struct {
	Key     string `json:"key"`
	Default string `json:"default"`
	Flag    string `json:"flag"`
	Env     string `json:"env"`
	Type    string `json:"type"`
}

// usageKey finds "(key NAME, env VAR)" in a flag's usage, which config.Flags writes for every key.
var usageKey = regexp.MustCompile(`\(key ([a-z0-9_.]+), env ([A-Z0-9_]+)\)`)

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want keys or load FILE")
	}
	switch args[0] {
	case "keys":
		fs := pflag.NewFlagSet("coordinator", pflag.ContinueOnError)
		config.Flags(fs)
		var out []keyInfo
		fs.VisitAll(func(f *pflag.Flag) {
			m := usageKey.FindStringSubmatch(f.Usage)
			if m == nil {
				return
			}
			out = append(out, keyInfo{Key: m[1], Default: f.DefValue, Flag: f.Name, Env: m[2], Type: f.Value.Type()})
		})
		return json.NewEncoder(os.Stdout).Encode(out)
	case "load":
		if len(args) != 2 {
			return fmt.Errorf("load wants one file")
		}
		fs := pflag.NewFlagSet("coordinator", pflag.ContinueOnError)
		config.Flags(fs)
		if err := fs.Parse([]string{"--config", args[1]}); err != nil {
			return err
		}
		c, err := config.Load(fs)
		if err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{
			"node_id": c.NodeID, "data_dir": c.DataDir, "bootstrap": c.Bootstrap, "join": c.Join,
			"raft_advertise": c.Raft.Advertise, "http_advertise": c.HTTP.Advertise, "raft_tls": c.Raft.TLS,
			"edges": len(c.Auth.Edges), "client_certs": c.Auth.ClientCerts, "admin_token_set": c.Auth.AdminToken != "",
			"lease_ttl": c.Lease.TTL.String(),
		})
	}
	return fmt.Errorf("unknown command %q", args[0])
}
