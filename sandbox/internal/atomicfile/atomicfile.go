// SPDX-License-Identifier: Apache-2.0

// Package atomicfile writes files that other processes read while they change (lab.json, a
// node's status.json, keys): through a temporary file and a rename, so a reader sees the old
// content or the new, never half of it.
package atomicfile

import (
	"fmt"
	"os"
)

// Write replaces path with data, created with perm.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
