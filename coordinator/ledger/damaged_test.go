// SPDX-License-Identifier: Apache-2.0

package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damagedLedger writes a ledger of 800 nodes (far more than 6 pages) at dir/ledger.db, closes it and returns
// its path and size.
func damagedLedger(t *testing.T) (string, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, l: l, term: 1}
	for i := range 4 {
		var ids []string
		for j := range 200 {
			ids = append(ids, fmt.Sprintf("node-%d-%03d.example.net", i, j))
		}
		h.register(t0, "eu", ids...)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, st.Size()
}

// TestOpen_ADamagedLedgerIsRefusedWithTheRemedy: a truncated ledger file (its pages past the end
// were mapped: SIGBUS) and one with garbage in a page (a slice panic) are refused at open with an
// error that names the file and the remedy, never a crash.
func TestOpen_ADamagedLedgerIsRefusedWithTheRemedy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(path string, size int64) error
	}{
		{"truncated", func(path string, size int64) error { return os.Truncate(path, 6*4096) }},
		{"garbage in a page", func(path string, size int64) error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			junk := []byte(strings.Repeat("\xff\x13\x00\x7f", 1024))
			for off := int64(4 * 4096); off < size; off += 4 * 4096 {
				if _, err := f.WriteAt(junk, off); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, size := damagedLedger(t)
			if err := tc.damage(path, size); err != nil {
				t.Fatal(err)
			}
			l, err := Open(path, Options{})
			if err == nil {
				l.Close()
				t.Fatal("a damaged ledger opened")
			}
			for _, want := range []string{path, "move it aside", "rebuilds"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestOpen_ALedgerHeldOpenIsInUseNotDamaged: a ledger another open holds (a running member) is
// refused within seconds as in use, without the damaged-ledger advice to move it aside.
func TestOpen_ALedgerHeldOpenIsInUseNotDamaged(t *testing.T) {
	path, _ := damagedLedger(t)
	held, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	l, err := Open(path, Options{})
	if err == nil {
		l.Close()
		t.Fatal("a ledger held open opened a second time")
	}
	if !errors.Is(err, ErrInUse) {
		t.Errorf("error %q is not ErrInUse", err)
	}
	for _, bad := range []string{"damaged", "move it aside"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("error %q says %q of a ledger in use", err, bad)
		}
	}
}
