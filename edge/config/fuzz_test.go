// SPDX-License-Identifier: Apache-2.0

package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
)

// FuzzLoad loads any file content as the edge's configuration. Load never panics; a file it
// refuses gets an error that names the file (YAML it cannot read) or is made only of FieldErrors,
// each naming a key the edge has and a reason; and a configuration it accepts passes Validate.
func FuzzLoad(f *testing.F) {
	// As isolate does for tests: nothing from the machine's environment or a Choria user
	// configuration reaches Load. The fuzz function itself never sets the environment.
	testkit.IsolateEnv(f, config.EnvPrefix+"_")
	for _, name := range []string{"every-choria-provisioner-key.yaml", "choria-provisioner/docs-common-settings.yaml", "choria-provisioner/packager-el.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"helper: /bin/helper\n",
		"",
		"helper: /bin/helper\nworkers: 1e20\n",
		"helper: /bin/helper\nworkers: -.inf\n",
		"helper: /bin/helper\nworkers: .nan\n",
		"helper: /bin/helper\nworkers: 2.5\n",
		"helper: /bin/helper\nworkers: 99999999999999999999\n",
		"helper: /bin/helper\nworkers: \"12 \"\n",
		"helper: /bin/helper\ninterval: 30\n",
		"helper: /bin/helper\ninterval: 9999999y\n",
		"helper: /bin/helper\nserver_jwt_validity: -1d\n",
		"helper: /bin/helper\ncert_deny_list: ['[', '(?P<x']\n",
		"helper: /bin/helper\ncert_deny_list: {a: b}\n",
		"helper: /bin/helper\nfeatures: true\n",
		"helper: /bin/helper\nfeatures:\n  pki: maybe\n  jwt: [true]\n",
		"helper: [/bin/helper, --x]\n",
		"helper: {path: /bin/helper}\n",
		"helper: /bin/helper\ncoordinators: [https://c1.example.net:8443, 'http://[::1', 7]\nregion: eu\nedge_name: e1\n",
		"helper: /bin/helper\ncoordinators: https://c1.example.net:8443\nregion: 'e u'\nedge_name: ''\n",
		"helper: /bin/helper\nhelper_environment: [MUSTER_EDGE_TOKEN, PATH, '', 'A=B']\n",
		"helper: /bin/helper\nmonitor_port: 70000\nbroker_port: -1\n",
		"helper: /bin/helper\nrequest_signing: sometimes\nlog_format: xml\n",
		"HELPER: /bin/helper\nWorkers: 3\n",
		"helper: /bin/helper\nhelper: /bin/other\n",
		"helper: /bin/helper\nno_such_key: 1\nfeatures:\n  no_such_feature: true\n",
		"helper: /bin/helper\nchoria_config: /nonexistent/client.conf\ncoordinator_tls_cert: /nonexistent/c.pem\n",
		"a: &a [*a]\n",
		"? [a, b]\n: c\n",
		"1: 2\n~: 3\n",
		"helper: !!binary L2Jpbi9oZWxwZXI=\n",
		"<<: {helper: /bin/helper}\n",
		"helper: \"\\x00\"\n",
		"\t- tab\n",
	} {
		f.Add([]byte(s))
	}
	keys := config.Keys()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "edge.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		fs := flags(t, "--config", path)
		c, _, err := config.Load(fs)
		if err == nil {
			if err := c.Validate(); err != nil {
				t.Fatalf("Load accepted %q, Validate refuses it: %v", data, err)
			}
			return
		}
		if strings.HasPrefix(err.Error(), "config file "+path+": ") {
			return
		}
		for _, leaf := range leaves(err) {
			var fe *config.FieldError
			if !errors.As(leaf, &fe) || !isKey(keys, fe.Key) || fe.Reason == "" {
				t.Fatalf("Load refused %q with %q: %q is not a key's FieldError", data, err, leaf)
			}
		}
	})
}

// isKey is true for a key the edge has, or a section of them ("features" of "features.pki").
func isKey(keys []string, k string) bool {
	return slices.ContainsFunc(keys, func(key string) bool { return key == k || strings.HasPrefix(key, k+".") })
}

// leaves lists the errors errors.Join put together in err, or err alone.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}
