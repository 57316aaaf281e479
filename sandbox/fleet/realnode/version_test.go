// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestVersionedBinary_RewritesTrailerKeepsProgram(t *testing.T) {
	dir := t.TempDir()
	prog := bytes.Repeat([]byte("\x7fELF program bytes "), 1000)
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, prog, 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := BinaryVersion(src); err != nil || v != "" {
		t.Fatalf("untagged binary: version %q err %v", v, err)
	}
	a := filepath.Join(dir, "a")
	if err := WriteVersionedBinary(src, a, "0.29.4"); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(dir, "b")
	if err := WriteVersionedBinary(a, b, "1.0.0-rc.1"); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{a: "0.29.4", b: "1.0.0-rc.1"} {
		v, err := BinaryVersion(path)
		if err != nil || v != want {
			t.Fatalf("%s: version %q err %v, want %q", path, v, err, want)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got[:len(got)-trailerSize], prog) || len(got) != len(prog)+trailerSize {
			t.Fatalf("%s: program bytes changed", path)
		}
		if st, _ := os.Stat(path); st.Mode().Perm()&0o100 == 0 {
			t.Fatalf("%s not executable", path)
		}
	}
	if err := WriteVersionedBinary(src, filepath.Join(dir, "c"), "has space"); err == nil {
		t.Fatal("version with a space accepted")
	}
}
