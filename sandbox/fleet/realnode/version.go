// SPDX-License-Identifier: Apache-2.0

package realnode

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// A node binary carries its Choria version in a fixed-size trailer after the executable's last
// byte (ELF loaders ignore trailing data). So one build serves every version, and a binary that
// release_update downloads really does report the newer version after its restart.
const (
	trailerSize   = 64
	trailerPrefix = "muster-sandbox-version="
)

// WriteVersionedBinary copies src to dst (mode 0755) with version in its trailer, replacing any
// trailer src already has.
func WriteVersionedBinary(src, dst, version string) error {
	if version == "" || len(trailerPrefix)+len(version) > trailerSize || strings.ContainsAny(version, " \n") {
		return fmt.Errorf("version %q: must be 1-%d characters without spaces", version, trailerSize-len(trailerPrefix))
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open node binary: %w", err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("stat node binary: %w", err)
	}
	size := st.Size()
	if v, _ := readTrailer(in, size); v != "" {
		size -= trailerSize
	}
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	if _, err := io.Copy(out, io.NewSectionReader(in, 0, size)); err != nil {
		out.Close()
		return fmt.Errorf("copy node binary to %s: %w", dst, err)
	}
	trailer := fmt.Sprintf("%-*s", trailerSize, trailerPrefix+version)
	if _, err := out.WriteString(trailer); err != nil {
		out.Close()
		return fmt.Errorf("write version trailer to %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", dst, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return fmt.Errorf("install %s: %w", dst, err)
	}
	return nil
}

// BinaryVersion is the version in path's trailer, "" when it has none.
func BinaryVersion(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open binary: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("stat binary: %w", err)
	}
	return readTrailer(f, st.Size())
}

func readTrailer(r io.ReaderAt, size int64) (string, error) {
	if size < trailerSize {
		return "", nil
	}
	buf := make([]byte, trailerSize)
	if _, err := r.ReadAt(buf, size-trailerSize); err != nil {
		return "", fmt.Errorf("read version trailer: %w", err)
	}
	if !bytes.HasPrefix(buf, []byte(trailerPrefix)) {
		return "", nil
	}
	return strings.TrimRight(string(buf[len(trailerPrefix):]), " "), nil
}
