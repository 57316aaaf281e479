// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/choria-io/go-choria/choria"
	"github.com/choria-io/tokens"

	"github.com/seed96588659/muster/pkg/testkit"
)

// signerOf returns the key a chained server JWT was signed with, after checking the chain
// verifies against org.
func signerOf(t *testing.T, signed string, org edKey) string {
	t.Helper()
	c, err := tokens.ParseServerToken(signed, org.pub)
	if err != nil {
		t.Fatalf("server JWT does not verify against the Organization Issuer: %v", err)
	}
	_, pk, _, _, err := c.ParseChainIssuerData()
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(pk)
}

func TestSigner_RotatedKeyAndTokenUsedWithoutRestart(t *testing.T) {
	org, oldKey, newKey := newEdKey(t), newEdKey(t), newEdKey(t)
	clock := newFakeClock()
	keyPath, tokenPath := tempPath(t, "signer.seed"), tempPath(t, "signer.jwt")
	writeSeed(t, keyPath, oldKey)
	oldToken, _ := chainToken(t, org, oldKey, 24*time.Hour)
	writeFile(t, tokenPath, []byte(oldToken))

	s, err := NewSigner(SignerConfig{SigningKey: keyPath, SigningToken: tokenPath, Reload: Reload{Interval: time.Second, Clock: clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	req := ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()}
	sign := func() string {
		t.Helper()
		signed, err := s.Sign(req)
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	if got := signerOf(t, sign(), org); got != oldKey.pubHex() {
		t.Fatalf("signed by %s, want the first key %s", got, oldKey.pubHex())
	}

	writeSeed(t, keyPath, newKey)
	newToken, _ := chainToken(t, org, newKey, 24*time.Hour)
	writeFile(t, tokenPath, []byte(newToken))

	// within the interval the files are not looked at: the cost the interval buys off
	if got := signerOf(t, sign(), org); got != oldKey.pubHex() {
		t.Fatalf("within the reload interval signed by %s, want the cached %s", got, oldKey.pubHex())
	}
	clock.Advance(time.Second)
	if got := signerOf(t, sign(), org); got != newKey.pubHex() {
		t.Fatalf("after rotation signed by %s, want the new key %s", got, newKey.pubHex())
	}
}

func TestSigner_KeyRewrittenInPlaceIsNoticed(t *testing.T) {
	oldKey, newKey := newEdKey(t), newEdKey(t)
	keyPath := tempPath(t, "signer.seed")
	if err := os.WriteFile(keyPath, []byte(hex.EncodeToString(oldKey.seed)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(SignerConfig{SigningKey: keyPath})
	if err != nil {
		t.Fatal(err)
	}
	req := ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()}
	if signed, err := s.Sign(req); err != nil {
		t.Fatal(err)
	} else if _, err := tokens.ParseServerToken(signed, oldKey.pub); err != nil {
		t.Fatal(err)
	}

	// same inode, same size, and on a coarse clock the same mtime: only the racy rule sees it
	if err := os.WriteFile(keyPath, []byte(hex.EncodeToString(newKey.seed)), 0o600); err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.ParseServerToken(signed, newKey.pub); err != nil {
		t.Fatalf("after an in-place rewrite the server JWT is not signed by the new key: %v", err)
	}
}

func TestSigner_BadRotationFailsNodesUntilFixed(t *testing.T) {
	good, next := newEdKey(t), newEdKey(t)
	keyPath := tempPath(t, "signer.seed")
	writeSeed(t, keyPath, good)
	s, err := NewSigner(SignerConfig{SigningKey: keyPath})
	if err != nil {
		t.Fatal(err)
	}
	req := ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()}

	// a half-written seed
	writeFile(t, keyPath, []byte(hex.EncodeToString(next.seed)[:40]))
	for range 2 {
		_, err := s.Sign(req)
		if want := "jwt_signing_key " + keyPath + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("got %v, want an error naming %s", err, keyPath)
		}
		if strings.Contains(err.Error(), hex.EncodeToString(next.seed)[:40]) {
			t.Fatal("error carries the seed")
		}
	}

	if err := os.Remove(keyPath); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(req); err == nil || !strings.Contains(err.Error(), keyPath+": no such file or directory") {
		t.Fatalf("removed key: got %v", err)
	}

	writeSeed(t, keyPath, next)
	signed, err := s.Sign(req)
	if err != nil {
		t.Fatalf("after the fix: %v", err)
	}
	if _, err := tokens.ParseServerToken(signed, next.pub); err != nil {
		t.Fatalf("after the fix the server JWT is not signed by the new key: %v", err)
	}
}

func TestSigner_HalfRotatedPairFailsNode(t *testing.T) {
	org, oldKey, newKey := newEdKey(t), newEdKey(t), newEdKey(t)
	keyPath, tokenPath := tempPath(t, "signer.seed"), tempPath(t, "signer.jwt")
	writeSeed(t, keyPath, oldKey)
	raw, _ := chainToken(t, org, oldKey, time.Hour)
	writeFile(t, tokenPath, []byte(raw))
	s, err := NewSigner(SignerConfig{SigningKey: keyPath, SigningToken: tokenPath})
	if err != nil {
		t.Fatal(err)
	}
	writeSeed(t, keyPath, newKey)
	_, err = s.Sign(ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()})
	want := fmt.Sprintf("jwt_signing_token %s was issued for public key %s, not for jwt_signing_key %s (%s)", tokenPath, oldKey.pubHex(), keyPath, newKey.pubHex())
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestFileCache_ParsesOnlyWhenChanged(t *testing.T) {
	path := tempPath(t, "value")
	writeFile(t, path, []byte("one"))
	// an old mtime: the stamp is trusted, as for any file not written in the last seconds
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	var parses atomic.Int32
	c := newFileCache("test_key", path, Reload{}, func(b []byte) (string, error) {
		parses.Add(1)
		return string(b), nil
	})
	for range 100 {
		if v, err := c.get(); err != nil || v != "one" {
			t.Fatalf("got %q, %v", v, err)
		}
	}
	if n := parses.Load(); n != 1 {
		t.Fatalf("parsed %d times for 100 uses of an unchanged file, want 1", n)
	}

	// same inode, size and mtime: only the ctime tells
	before := c.cur.Load().stamp
	if err := os.WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	// the kernel stamps ctime from a coarse clock: wait for it to tick past the cached one
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st := stampOf(fi); st.ctime != before.ctime {
			if st.ino != before.ino || st.size != before.size || st.mtime != before.mtime {
				t.Fatalf("stamp %+v differs from %+v in more than ctime", st, before)
			}
			break
		}
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if v, err := c.get(); err != nil || v != "two" {
		t.Fatalf("after a same-size rewrite with the mtime put back: got %q, %v", v, err)
	}
}

func TestFileCache_RecentFileRereadUntilSettled(t *testing.T) {
	path := tempPath(t, "value")
	writeFile(t, path, []byte("one"))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(fi.ModTime())
	var parses atomic.Int32
	c := newFileCache("test_key", path, Reload{Clock: clock.Now}, func(b []byte) (string, error) {
		parses.Add(1)
		return string(b), nil
	})
	for range 3 {
		if _, err := c.get(); err != nil {
			t.Fatal(err)
		}
	}
	if n := parses.Load(); n != 3 {
		t.Fatalf("a file written just now parsed %d times in 3 uses, want 3", n)
	}
	clock.Advance(racyWindow + time.Second)
	for range 3 {
		if _, err := c.get(); err != nil {
			t.Fatal(err)
		}
	}
	if n := parses.Load(); n != 4 {
		t.Fatalf("parsed %d times, want one more read once settled", n)
	}
}

func BenchmarkFileCache(b *testing.B) {
	k := newEdKey(b)
	path := seedFile(b, k)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		b.Fatal(err)
	}
	for _, interval := range []time.Duration{0, time.Second} {
		b.Run(fmt.Sprintf("interval=%v", interval), func(b *testing.B) {
			c := newFileCache("jwt_signing_key", path, Reload{Interval: interval}, parseSeed)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.get(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// what choria-provisioner does per node: read and parse the seed every time
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, pri, err := choria.Ed25519KeyPairFromSeedFile(path); err != nil || len(pri) != ed25519.PrivateKeySize {
				b.Fatal(err)
			}
		}
	})
}

func TestSigner_ConcurrentSignsDuringRotation(t *testing.T) {
	keys := []edKey{newEdKey(t), newEdKey(t)}
	keyPath := tempPath(t, "signer.seed")
	writeSeed(t, keyPath, keys[0])
	s, err := NewSigner(SignerConfig{SigningKey: keyPath})
	if err != nil {
		t.Fatal(err)
	}
	req := ServerJWTRequest{Identity: "n1", PublicKey: newEdKey(t).pubHex()}

	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for range 50 {
				signed, err := s.Sign(req)
				if err != nil {
					errs <- err
					return
				}
				if _, err0 := tokens.ParseServerToken(signed, keys[0].pub); err0 != nil {
					if _, err1 := tokens.ParseServerToken(signed, keys[1].pub); err1 != nil {
						errs <- fmt.Errorf("signed by neither key: %v, %v", err0, err1)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for i := range 20 {
		writeSeed(t, keyPath, keys[(i+1)%2])
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
