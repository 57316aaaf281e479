// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxLine bounds one record; real records are a few hundred bytes.
const maxLine = 1 << 20

// ReadFile reads every action in a JSON-lines file, in file order.
func ReadFile(path string) ([]Action, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open action log: %w", err)
	}
	defer f.Close()
	actions, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return actions, nil
}

// Read decodes JSON lines; an undecodable line is an error naming its line number.
func Read(r io.Reader) ([]Action, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	var out []Action
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var a Action
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	return out, nil
}
