// SPDX-License-Identifier: Apache-2.0

package settings_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/seed96588659/muster/pkg/settings"
)

func testSchema() *settings.Schema {
	return &settings.Schema{
		EnvPrefix: "SETTINGS_TEST",
		Keys: []settings.Key{
			{Name: "name", Kind: settings.String, Default: "anon", Flag: "name", Usage: "a name"},
			{Name: "count", Kind: settings.Int, Default: 3, Flag: "count", Usage: "a count"},
			{Name: "on", Kind: settings.Bool, Flag: "on", Usage: "a switch"},
			{Name: "wait", Kind: settings.Duration, Default: "1m", Flag: "wait", Usage: "a wait"},
			{Name: "items", Kind: settings.List, Flag: "items", Usage: "some items"},
			{Name: "token", Kind: settings.String, Flag: "token", Secret: true, Usage: "a secret"},
			{Name: "part.one", Kind: settings.Bool, Usage: "a switch in a section"},
			{Name: "old", Kind: settings.String, Ignored: "nothing reads it"},
		},
		DurationExamples: "5m, 1h",
	}
}

// open declares the schema's flags, parses args and opens the layers, with file as the
// configuration file when it is not "".
func open(t *testing.T, s *settings.Schema, file string, args ...string) *settings.Source {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s.DeclareFlags(fs)
	if file != "" {
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", p)
	}
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	src, err := s.Open(fs)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestOpen_FlagOverEnvironmentOverFileOverDefault(t *testing.T) {
	s := testSchema()
	t.Setenv("SETTINGS_TEST_COUNT", "20")
	t.Setenv("SETTINGS_TEST_WAIT", "2h")
	src := open(t, s, "name: from-file\ncount: 10\nwait: 5m\npart:\n  one: true\n", "--count", "30")
	if got := src.String("name"); got != "from-file" {
		t.Errorf("name = %q, want the file's", got)
	}
	if got := src.Int("count"); got != 30 {
		t.Errorf("count = %d, want the flag's 30", got)
	}
	if got := src.Duration("wait"); got != 2*time.Hour {
		t.Errorf("wait = %s, want the environment's 2h", got)
	}
	if !src.Bool("part.one") {
		t.Error("part.one from the file's section is off")
	}
	if err := src.Err(); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(slices.Values(src.FileKeys)); !slices.Equal(got, []string{"count", "name", "part.one", "wait"}) {
		t.Errorf("file keys %v", got)
	}
	t.Setenv("SETTINGS_TEST_COUNT", "")
	t.Setenv("SETTINGS_TEST_WAIT", "")
	def := open(t, s, "")
	if def.String("name") != "anon" || def.Int("count") != 3 || def.Duration("wait") != time.Minute || def.Bool("on") {
		t.Errorf("defaults: %q %d %s %t", def.String("name"), def.Int("count"), def.Duration("wait"), def.Bool("on"))
	}
}

func TestOpen_BlankMeansTheDefault(t *testing.T) {
	t.Setenv("SETTINGS_TEST_NAME", "  ")
	src := open(t, testSchema(), "count: ''\n")
	if src.String("name") != "anon" || src.Int("count") != 3 {
		t.Errorf("blank values read %q and %d, want the defaults", src.String("name"), src.Int("count"))
	}
}

// TestDeclareFlags_ValueIsReadAsTheKey: a flag keeps its text, so a bad value is refused naming
// the key like one from the file or the environment, and the help still names the kind.
func TestDeclareFlags_ValueIsReadAsTheKey(t *testing.T) {
	s := testSchema()
	src := open(t, s, "", "--count", "many", "--wait", "30")
	src.Int("count")
	src.Duration("wait")
	var fe *settings.FieldError
	if err := src.Err(); !errors.As(err, &fe) || fe.Key != "count" || !strings.Contains(err.Error(), `count: "many" is not a whole number`) {
		t.Errorf("error %v, want count's first", err)
	}
	if err := src.Err(); !strings.Contains(err.Error(), `wait: "30" is not a duration`) {
		t.Errorf("error %v, want wait's too", err)
	}
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s.DeclareFlags(fs)
	for flag, kind := range map[string]string{"count": "int", "wait": "duration", "name": "string", "on": "bool", "items": "stringSlice"} {
		if got := fs.Lookup(flag).Value.Type(); got != kind {
			t.Errorf("--%s is a %s flag, want %s", flag, got, kind)
		}
	}
	if fs.Lookup("count").DefValue != "3" || fs.Lookup("token") != nil {
		t.Errorf("--count default %q; --token declared: %v", fs.Lookup("count").DefValue, fs.Lookup("token") != nil)
	}
}

func TestReader_RefusesEachBadValueOnceNamingItsKey(t *testing.T) {
	src := open(t, testSchema(), "name: 12e45\ncount: 1e20\nwait: 300\non: maybe\nitems: {a: b}\npart: true\n")
	src.String("name")
	src.Int("count")
	src.Int("count")
	src.Duration("wait")
	src.Bool("on")
	src.List("items")
	src.Section("part")
	want := []string{
		"name: expected a string, got float64 1.2e+46 (quote the value)",
		"count: 1e+20 is out of range",
		"wait: 300 has no unit: expected a duration such as 5m, 1h",
		`on: "maybe" is not true or false`,
		"items: expected a list, got map[string]interface {} map[a:b]",
		"part: expected a map of one, got bool true",
	}
	if got := strings.Split(src.Err().Error(), "\n"); !slices.Equal(got, want) {
		t.Errorf("errors\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := src.First(); err == nil || !strings.HasPrefix(err.Error(), "name: ") {
		t.Errorf("first error %v, want name's", err)
	}
}

func TestReader_ScalarTextReadsNumbersAsWritten(t *testing.T) {
	s := testSchema()
	s.ScalarText = true
	src := open(t, s, "name: 1234567890123456\n")
	if got := src.String("name"); got != "1234567890123456" || src.Err() != nil {
		t.Errorf("name = %q (%v), want the number as written", got, src.Err())
	}
}

func TestReader_ListsFromTheEnvironment(t *testing.T) {
	s := testSchema()
	t.Setenv("SETTINGS_TEST_ITEMS", `["a{1,3}", " b "]`)
	if got := open(t, s, "").List("items"); !slices.Equal(got, []string{"a{1,3}", "b"}) {
		t.Errorf("JSON array read as %q", got)
	}
	t.Setenv("SETTINGS_TEST_ITEMS", "a, b,,c d")
	if got := open(t, s, "").List("items"); !slices.Equal(got, []string{"a", "b", "c d"}) {
		t.Errorf("comma-separated read as %q", got)
	}
	s.ListSeparators = ", "
	if got := open(t, s, "").List("items"); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("separated by commas and spaces read as %q", got)
	}
	if got := open(t, s, "items: [x, ' y ']\n", "--items", "p,q").List("items"); !slices.Equal(got, []string{"p", "q"}) {
		t.Errorf("flag read as %q", got)
	}
}

func TestSchema_VariablesAndSuggestions(t *testing.T) {
	s := testSchema()
	environ := []string{"SETTINGS_TEST_CONT=1", "SETTINGS_TEST_ONE=true", "SETTINGS_TEST_EMPTY=", "SETTINGS_TEST_X_Y=1", "OTHER=1"}
	if got := s.Variables(environ, "SETTINGS_TEST_X_"); !slices.Equal(got, []string{"SETTINGS_TEST_CONT", "SETTINGS_TEST_ONE"}) {
		t.Errorf("variables %q", got)
	}
	if k, ok := s.KeyOfVariable("SETTINGS_TEST_PART_ONE"); !ok || k.Name != "part.one" {
		t.Errorf("SETTINGS_TEST_PART_ONE names %q", k.Name)
	}
	for name, want := range map[string]string{
		"SETTINGS_TEST_CONT": " (did you mean SETTINGS_TEST_COUNT?)",
		"SETTINGS_TEST_ONE":  " (did you mean SETTINGS_TEST_PART_ONE?)",
		"SETTINGS_TEST_ZZZZ": "",
	} {
		if got := s.SuggestVariable(name); got != want {
			t.Errorf("SuggestVariable(%s) = %q, want %q", name, got, want)
		}
	}
	if got := s.SuggestKey("one"); got != " (did you mean part.one?)" {
		t.Errorf("SuggestKey(one) = %q", got)
	}
	if got := s.SuggestKey("cuont"); got != " (did you mean count?)" {
		t.Errorf("SuggestKey(cuont) = %q", got)
	}
}
