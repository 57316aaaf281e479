// SPDX-License-Identifier: Apache-2.0

package keys

import (
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/seed96588659/muster/pkg/testkit"
)

// csrPEM is a real CSR for cn with dns names, as a node's csr reply carries it.
func csrPEM(t testing.TB, cn string, dns ...string) string {
	t.Helper()
	_, csr := testkit.CSR(t, cn, dns...)
	return csr
}

func TestDenyList_ValidateCSR(t *testing.T) {
	d, err := NewDenyList(nil)
	if err != nil {
		t.Fatal(err)
	}
	ok := csrPEM(t, "n1.example.net", "n1.example.net", "n1")
	tampered := func() string {
		block, _ := pem.Decode([]byte(ok))
		block.Bytes[len(block.Bytes)-3] ^= 0xff
		return string(pem.EncodeToMemory(block))
	}()

	cases := []struct {
		name, identity, csr, want string
	}{
		{"valid", "n1.example.net", ok, ""},
		{"empty", "n1.example.net", "", "no CSR received"},
		{"not PEM", "n1.example.net", "garbage", "could not parse CSR: no PEM block found"},
		{"PEM of garbage", "n1.example.net", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("garbage")})), "could not parse CSR: "},
		{"bad signature", "n1.example.net", tampered, "CSR signature: "},
		{"other common name", "n2.example.net", ok, "common name n1.example.net does not match identity n2.example.net"},
		{"denied common name", "n1.choria", csrPEM(t, "n1.choria"), `n1.choria matches denied certificate pattern \.choria$`},
		{"denied privileged", "n1.privileged.mcollective", csrPEM(t, "n1.privileged.mcollective"), `n1.privileged.mcollective matches denied certificate pattern \.privileged.mcollective$`},
		{"denied DNS name", "n1.example.net", csrPEM(t, "n1.example.net", "n1.example.net", "admin.mcollective"), `admin.mcollective matches denied certificate pattern \.mcollective$`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			csr, err := d.ValidateCSR(tc.identity, tc.csr)
			if tc.want == "" {
				if err != nil || csr.Subject.CommonName != tc.identity {
					t.Fatalf("got %v, %v", csr, err)
				}
				return
			}
			if err == nil || csr != nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error starting %q", err, tc.want)
			}
		})
	}
	if _, err := d.ValidateCSR("n1", ""); !errors.Is(err, ErrNoCSR) {
		t.Fatalf("got %v, want %v", err, ErrNoCSR)
	}
}

func TestNewDenyList_Patterns(t *testing.T) {
	d, err := NewDenyList([]string{`/^admin\./`, `\.internal$`, "/"})
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"admin.example.net": `/^admin\./`,
		"n1.internal":       `\.internal$`,
		"n1/2":              "/",
		"n1.example.net":    "",
		"n1.choria":         "", // a configured list replaces the default
	}
	for name, want := range cases {
		got, ok := d.Match(name)
		if got != want || ok != (want != "") {
			t.Errorf("Match(%q) = %q, %v, want %q", name, got, ok, want)
		}
	}

	csr := csrPEM(t, "admin.example.net")
	if _, err := d.ValidateCSR("admin.example.net", csr); err == nil || err.Error() != `admin.example.net matches denied certificate pattern /^admin\./` {
		t.Fatalf("got %v", err)
	}
}

func TestNewDenyList_BadPattern(t *testing.T) {
	cases := map[string][]string{
		`cert_deny_list[1] "/a(b/": error parsing regexp`: {`\.choria$`, "/a(b/"},
		`cert_deny_list[0] is empty`:                      {""},
	}
	for want, patterns := range cases {
		d, err := NewDenyList(patterns)
		if err == nil || d != nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("NewDenyList(%q) = %v, want an error starting %q", patterns, err, want)
		}
	}
}

func BenchmarkDenyList_ValidateCSR(b *testing.B) {
	d, err := NewDenyList(nil)
	if err != nil {
		b.Fatal(err)
	}
	csr := csrPEM(b, "n1.example.net", "n1.example.net", "n1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.ValidateCSR("n1.example.net", csr); err != nil {
			b.Fatal(err)
		}
	}
}
