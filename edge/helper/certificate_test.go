// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/testkit"
)

// certificatePEM is a self-signed certificate with common name cn and DNS names dns.
func certificatePEM(t testing.TB, cn string, dns ...string) string {
	t.Helper()
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: testkit.SelfSigned(t, testkit.NewKey(t), cn, dns...).Raw}))
}

// TestRunners_ACertificateNotNamingTheNodeIsRefused: whatever the runner, an answer whose
// certificate names another node (by common name or DNS name) fails for that node, naming both;
// one that names the node either way is taken.
func TestRunners_ACertificateNotNamingTheNodeIsRefused(t *testing.T) {
	const node = "n1.example.net"
	for _, tc := range []struct {
		name   string
		cert   string
		refuse string // "" when taken
	}{
		{"common name", certificatePEM(t, node), ""},
		{"DNS name", certificatePEM(t, "n1", "localhost", node), ""},
		{"another node", certificatePEM(t, "n2.example.net", "n2.example.net"), "n2.example.net"},
		{"a suffix of the node", certificatePEM(t, "example.net", "n1.example"), "example.net"},
		{"not PEM", "CERTPEM", "not a PEM certificate"},
	} {
		answer, err := json.Marshal(map[string]string{"certificate": tc.cert, "msg": "ok"})
		if err != nil {
			t.Fatal(err)
		}
		for _, persistent := range []bool{false, true} {
			mode := map[bool]string{false: "exec", true: "persistent"}[persistent]
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				answerFile := filepath.Join(dir, "answer.json")
				writeFile(t, answerFile, string(answer))
				var r helper.Runner
				if persistent {
					// the answer is the file with the request's id put in front
					cmd := script(t, dir, "cert.sh", shID+`while IFS= read -r line; do
  rid "$line"; printf '{"id":%s,' "$id"; tail -c +2 "`+answerFile+`"; echo
done
`)
					r, err = helper.NewPersistent(helper.Options{Command: cmd})
				} else {
					r, err = helper.NewExec(helper.Options{Command: script(t, dir, "cert.sh", "cat >/dev/null\ncat \""+answerFile+"\"\n")})
				}
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				res, err := r.Run(context.Background(), &helper.Request{Identity: node})
				if tc.refuse == "" {
					if err != nil || res.Certificate != tc.cert {
						t.Fatalf("certificate for %s refused: %v", node, err)
					}
					return
				}
				if !errors.Is(err, helper.ErrWrongCertificate) || !strings.Contains(err.Error(), node) || !strings.Contains(err.Error(), tc.refuse) {
					t.Fatalf("error %v, want ErrWrongCertificate naming %s and %q", err, node, tc.refuse)
				}
			})
		}
	}
}
