// SPDX-License-Identifier: Apache-2.0

package deploysuite

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	edgeconfig "github.com/seed96588659/muster/edge/config"
	"github.com/seed96588659/muster/pkg/testkit"
)

// docRow is one row of a key table in docs/configure.md.
type docRow struct {
	key, def, flag, env string
}

// keyTable reads the key table under the heading that starts with heading.
func keyTable(t *testing.T, heading string) map[string]docRow {
	t.Helper()
	text := string(readRepo(t, "docs/configure.md"))
	i := strings.Index(text, "\n## "+heading)
	if i < 0 {
		t.Fatalf("docs/configure.md has no section %q", heading)
	}
	section := text[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	out := map[string]docRow{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 5 {
			continue
		}
		r := docRow{key: unquote(strings.TrimPrefix(cells[0], "| ")), def: cells[1], flag: unquote(cells[2]), env: unquote(cells[3])}
		if _, dup := out[r.key]; dup {
			t.Errorf("docs/configure.md %s: %s twice", heading, r.key)
		}
		out[r.key] = r
	}
	return out
}

func unquote(s string) string { return strings.Trim(strings.TrimSpace(s), "`") }

// literal returns a default cell's value when it is one (in backticks).
func literal(cell string) (string, bool) {
	if len(cell) >= 2 && strings.HasPrefix(cell, "`") && strings.HasSuffix(cell, "`") {
		return cell[1 : len(cell)-1], true
	}
	return "", false
}

// TestConfigureDoc_EdgeKeysAndDefaults: docs/configure.md lists exactly config.Keys(), with each
// key's variable and flag, and each documented default is the code's: a file that sets a key to
// its documented default loads to the same configuration as a file that leaves it out (which in
// turn is config.Defaults()).
func TestConfigureDoc_EdgeKeysAndDefaults(t *testing.T) {
	rows := keyTable(t, "Edge")
	var documented []string
	for k := range rows {
		documented = append(documented, k)
	}
	code := edgeconfig.Keys()
	sort.Strings(documented)
	sorted := slices.Sorted(slices.Values(code))
	if !slices.Equal(documented, sorted) {
		t.Errorf("docs/configure.md edge keys differ from config.Keys():\n docs only: %v\n code only: %v", testkit.Missing(documented, sorted), testkit.Missing(sorted, documented))
	}

	fs := pflag.NewFlagSet("muster-edge", pflag.ContinueOnError)
	edgeconfig.BindFlags(fs)
	flags := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if m := regexp.MustCompile(`\(key ([a-z0-9_.]+), env `).FindStringSubmatch(f.Usage); m != nil {
			flags[m[1]] = "--" + f.Name
		}
	})
	for _, k := range code {
		r, ok := rows[k]
		if !ok {
			continue
		}
		if r.env != edgeconfig.EnvName(k) {
			t.Errorf("%s: documented variable %s, the code reads %s", k, r.env, edgeconfig.EnvName(k))
		}
		want := flags[k]
		if want == "" {
			want = "none"
		}
		if r.flag != want {
			t.Errorf("%s: documented flag %s, the code has %s", k, r.flag, want)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "edge.yaml")
	const base = "helper: /bin/true\n"
	load := func(body string) *edgeconfig.Config {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, _, err := loadEdge(t, file, nil)
		if err != nil {
			t.Fatalf("load %q: %v", body, err)
		}
		return c
	}
	def := load(base)
	want := edgeconfig.Defaults()
	want.Helper, want.File, want.ChoriaConfig = def.Helper, def.File, def.ChoriaConfig
	if !reflect.DeepEqual(def, want) {
		t.Errorf("a file with only a helper loads to\n %+v\nconfig.Defaults() is\n %+v", def, want)
	}
	for _, k := range code {
		r, ok := rows[k]
		if !ok {
			continue
		}
		v, isLiteral := literal(r.def)
		switch {
		case r.def == "none":
			continue
		case !isLiteral && k == "choria_config":
			continue // the machine's Choria client configuration, when that file exists
		case !isLiteral:
			t.Errorf("%s: default %q is neither a `value` nor none", k, r.def)
			continue
		}
		got := load(base + nested(k, v))
		if !reflect.DeepEqual(got, def) {
			t.Errorf("%s: the documented default %s is not the code's: setting it changes the configuration\n got  %+v\n want %+v", k, v, got, def)
		}
	}
}

// nested writes key: value, nesting a dotted key as YAML does (features.pki -> features: {pki: v}).
func nested(key, value string) string {
	if section, sub, ok := strings.Cut(key, "."); ok {
		return section + ":\n  " + sub + ": " + value + "\n"
	}
	return key + ": " + value + "\n"
}

// TestConfigureDoc_CoordinatorKeysAndDefaults: docs/configure.md lists exactly the coordinator's
// keys (as its config.Flags declares them), each with the code's default, flag and variable.
func TestConfigureDoc_CoordinatorKeysAndDefaults(t *testing.T) {
	out, err := exec.Command(bins.coordcheck, "keys").Output()
	if err != nil {
		t.Fatalf("coordcheck keys: %v", err)
	}
	var code []struct{ Key, Default, Flag, Env string }
	if err := json.Unmarshal(out, &code); err != nil {
		t.Fatal(err)
	}
	if len(code) < 30 {
		t.Fatalf("coordcheck found only %d keys", len(code))
	}
	rows := keyTable(t, "Coordinator")
	var codeKeys []string
	for _, k := range code {
		codeKeys = append(codeKeys, k.Key)
		r, ok := rows[k.Key]
		if !ok {
			t.Errorf("docs/configure.md does not document coordinator key %s", k.Key)
			continue
		}
		if r.flag != "--"+k.Flag || r.env != k.Env {
			t.Errorf("%s: documented flag %s and variable %s, the code has --%s and %s", k.Key, r.flag, r.env, k.Flag, k.Env)
		}
		v, isLiteral := literal(r.def)
		if r.def == "none" {
			v, isLiteral = "", true
		}
		if !isLiteral || !sameValue(v, k.Default) {
			t.Errorf("%s: documented default %s, the code's is %q", k.Key, r.def, k.Default)
		}
	}
	for k := range rows {
		if !slices.Contains(codeKeys, k) {
			t.Errorf("docs/configure.md documents coordinator key %s, which the code does not have", k)
		}
	}
}

// sameValue compares defaults, durations by their length (2m is 2m0s).
func sameValue(doc, code string) bool {
	if doc == code {
		return true
	}
	a, err1 := time.ParseDuration(doc)
	b, err2 := time.ParseDuration(code)
	return err1 == nil && err2 == nil && a == b
}

// TestDocs_LinksAndCommandsExist: every relative link of docs/ and the README leads to a file,
// and every `muster-coordinator SUB` / `muster-edge SUB` written in them, with the --flags on the
// same line, is a subcommand and flags the binaries have.
func TestDocs_LinksAndCommandsExist(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(files) < 8 {
		t.Fatalf("docs/ has %d pages, want at least 8", len(files))
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	// A command starts a line (code blocks) or follows a backtick (inline code).
	cmdRe := regexp.MustCompile("(?m)(?:^\\s*|`)(muster-coordinator|muster-edge) ([a-z]+)\\b([^\n`]*)")
	helps := map[string]string{}
	help := func(bin, sub string) string {
		key := bin + " " + sub
		if h, ok := helps[key]; ok {
			return h
		}
		path := map[string]string{"muster-coordinator": bins.coordinator, "muster-edge": bins.edge}[bin]
		out, err := exec.Command(path, sub, "--help").CombinedOutput()
		h := string(out)
		if err != nil || strings.Contains(h, "unknown command") {
			h = ""
		}
		helps[key] = h
		return h
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		body := string(readRepo(t, rel))
		for _, m := range link.FindAllStringSubmatch(body, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel, target)
			}
		}
		for _, m := range cmdRe.FindAllStringSubmatch(body, -1) {
			bin, sub := m[1], m[2]
			h := help(bin, sub)
			if h == "" {
				t.Errorf("%s: `%s %s` is not a command of %s", rel, bin, sub, bin)
				continue
			}
			for _, fl := range regexp.MustCompile(`(?:^|\s)(--[a-z][a-z0-9-]*)`).FindAllStringSubmatch(m[3], -1) {
				if !strings.Contains(h, fl[1]+" ") && !strings.Contains(h, fl[1]+"\n") && !strings.Contains(h, fl[1]+"=") {
					t.Errorf("%s: `%s %s %s`: %s %s has no flag %s", rel, bin, sub, fl[1], bin, sub, fl[1])
				}
			}
		}
	}
}
