// SPDX-License-Identifier: Apache-2.0

package packagesuite

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// extract unpacks a package into a new directory: a .deb with dpkg-deb, an .rpm with
// rpm2archive (librpm's own reading, with ./ names) and a tar reader that keeps every path
// inside the directory.
func extract(t *testing.T, path, format string) string {
	t.Helper()
	dir := t.TempDir()
	switch format {
	case "deb":
		run(t, "dpkg-deb", "-x", path, dir)
	case "rpm":
		in, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command("rpm2archive", "-")
		cmd.Stdin = in
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		tgz, err := cmd.Output()
		if err != nil {
			t.Fatalf("rpm2archive %s: %v\n%s", path, err, stderr.String())
		}
		if err := untar(tgz, dir); err != nil {
			t.Fatalf("unpack %s: %v", path, err)
		}
	}
	return dir
}

// untar writes the regular files and directories of a gzipped tar below dir.
func untar(tgz []byte, dir string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		rel := filepath.Clean(strings.TrimLeft(h.Name, "./"))
		if rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		target := filepath.Join(dir, rel)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			_, cerr := io.Copy(f, tr)
			if err := f.Close(); cerr == nil {
				cerr = err
			}
			if cerr != nil {
				return fmt.Errorf("%s: %w", h.Name, cerr)
			}
		}
	}
}
