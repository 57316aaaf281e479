// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// readRepo reads a file of the repository by its path from the top.
func readRepo(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return b
}

// yamlDocs decodes every document of a multi-document YAML file.
func yamlDocs(t *testing.T, rel string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readRepo(t, rel)))
	var docs []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if err != nil {
			if err.Error() == "EOF" {
				return docs
			}
			t.Fatalf("%s: document %d: %v", rel, len(docs)+1, err)
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
}

// etcPaths finds the absolute paths of files a configuration names under /etc/muster.
var etcPaths = regexp.MustCompile(`/etc/muster/[A-Za-z0-9_./-]+`)

// stage rewrites a configuration so the files it names under /etc/muster and /var/lib exist
// below dir (empty stand-ins: the loaders check that files exist, not what they hold) and
// returns the path of the rewritten file.
func stage(t *testing.T, dir, name, body string) string {
	t.Helper()
	for _, p := range etcPaths.FindAllString(body, -1) {
		if strings.HasSuffix(p, "/") {
			continue
		}
		local := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(local, []byte("stand-in\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	body = strings.ReplaceAll(body, "/etc/muster/", filepath.Join(dir, "etc", "muster")+"/")
	body = strings.ReplaceAll(body, "/var/lib/", filepath.Join(dir, "var", "lib")+"/")
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// envFile reads KEY=VALUE lines, skipping comments and blank lines.
func envFile(t *testing.T, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(readRepo(t, rel)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", rel, line)
		}
		out[k] = v
	}
	return out
}

// path walks nested maps and lists: path(doc, "spec", "template", "spec").
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch key := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[key]
		case int:
			l, ok := v.([]any)
			if !ok || key >= len(l) {
				return nil
			}
			v = l[key]
		}
	}
	return v
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// yamlMap decodes one YAML document held in a string (a ConfigMap's file).
func yamlMap(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("embedded YAML: %v", err)
	}
	return m
}
