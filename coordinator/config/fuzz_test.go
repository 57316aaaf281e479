// SPDX-License-Identifier: Apache-2.0

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// FuzzLoad loads any file content as a member's configuration. Load never panics; a file it
// refuses gets an error that names the file (YAML it cannot read, an unknown key) or begins with
// the key whose value is wrong; and a configuration it accepts passes Validate again.
func FuzzLoad(f *testing.F) {
	valid := "node_id: c1\ndata_dir: /var/lib/muster\nraft:\n  bind: 127.0.0.1:7000\nauth:\n  edge_tokens: [" + edgeTok + "]\n  admin_token: " + adminTok + "\n"
	example, err := os.ReadFile("example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		valid,
		string(example),
		"",
		"# only a comment\n",
		"---\n...\n",
		valid + "lease:\n  ttl: 30\n",
		valid + "lease:\n  ttl: 1e400h\n",
		valid + "lease:\n  max_nodes: 99999999999999999999\n",
		valid + "lease:\n  max_nodes: .inf\n",
		valid + "lease:\n  max_attempts: .nan\n",
		valid + "lease:\n  max_attempts: 2.5\n",
		valid + "raft:\n  snapshot_threshold: -1\n",
		valid + "bootstrap: yes\n",
		valid + "bootstrap: [true]\n",
		valid + "raft: 5\n",
		valid + "raft: [bind, advertise]\n",
		valid + "raft:\n  bind: {host: 127.0.0.1}\n",
		"node_id: c1\nnode_id: c2\n",
		"Node_ID: c1\nDATA_DIR: /d\n",
		"raft.bind: 127.0.0.1:7000\n",
		"1: 2\ntrue: false\n~: x\n",
		"? [a, b]\n: c\n",
		"a: &x {b: 1}\nc: *x\n",
		"a: &a [*a]\n",
		"x: &x [1, 2]\ny: [*x, *x, *x, *x]\nz: [*y, *y, *y, *y]\n",
		"<<: {node_id: c1}\n",
		"node_id: !!binary aGVsbG8=\n",
		"node_id: !!float 1\n",
		"auth:\n  edges: [\"e1@eu=" + edgeTok + "\", \"@\", \"e2@\", 7]\n",
		"auth:\n  edge_tokens: \"a, b c\"\n",
		"join: {a: b}\n",
		"\t- tab\n",
		"node_id: \"\\xff\"\n",
		"node_id: \"\x00\"\n",
		"\xef\xbb\xbfnode_id: c1\n",
	} {
		f.Add([]byte(s))
	}
	keys := schema().Names()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "coordinator.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		Flags(fs)
		if err := fs.Set(FlagConfig, path); err != nil {
			t.Fatal(err)
		}
		c, err := Load(fs)
		if err == nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("Load accepted %q, Validate refuses it: %v", data, err)
			}
			return
		}
		msg := err.Error()
		if strings.HasPrefix(msg, "config file "+path+": ") {
			return
		}
		for _, k := range keys {
			if strings.HasPrefix(msg, k) {
				return
			}
		}
		t.Fatalf("Load refused %q with %q, which names neither the file nor a key", data, msg)
	})
}
