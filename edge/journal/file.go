// SPDX-License-Identifier: Apache-2.0

package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// read returns the intents the file leaves open. Bytes after the last newline are a record torn
// by a kill mid-write and are ignored; a complete line that does not parse refuses the file.
func read(path string) (map[key]Intent, error) {
	open := map[key]Intent{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return open, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		data = data[:i+1]
	}
	for n, line := range bytes.SplitAfter(data, []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("journal %s line %d: %w: %w", path, n+1, ErrCorrupt, err)
		}
		switch r.Op {
		case opBegin:
			if err := r.check(); err != nil {
				return nil, fmt.Errorf("journal %s line %d: %w: %w", path, n+1, ErrCorrupt, err)
			}
			open[r.key()] = r.Intent
		case opEnd:
			delete(open, r.key())
		default:
			return nil, fmt.Errorf("journal %s line %d: %w: unknown op %q", path, n+1, ErrCorrupt, r.Op)
		}
	}
	return open, nil
}

// rewrite replaces the file at path with one begin record per open intent, durably (written,
// fsynced, renamed over the old file, directory fsynced), and returns it opened for appending.
func rewrite(path string, open map[key]Intent) (*os.File, error) {
	var buf bytes.Buffer
	for _, in := range open {
		line, err := json.Marshal(record{Op: opBegin, Intent: in})
		if err != nil {
			return nil, fmt.Errorf("journal %s: encode intent of %s: %w", path, in.Node, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	return f, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
