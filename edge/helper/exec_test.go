// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/choria-io/tokens"
	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/rpc"
	"github.com/seed96588659/muster/pkg/testkit"
)

// fullAnswer sets every key of a Response; its certificate is cert's, for n1.example.net.
const fullAnswer = `{
  "defer": false, "shutdown": false, "msg": "configured",
  "key": "KEYPEM", "certificate": CERT, "ca": "CAPEM", "ssldir": "/etc/choria/ssl",
  "server_claims": {"identity": "n1.example.net", "collectives": ["mcollective"], "permissions": {"submission": true}},
  "configuration": {"identity": "n1.example.net", "plugin.choria.server.provision": "false"},
  "action_policies": {"rpcutil.policy": "policy default allow"},
  "opa_policies": {"default.rego": "package choria.aaa.policy"},
  "upgrade": "0.30.0"
}`

// fullAnswerWith is fullAnswer with the certificate cert.
func fullAnswerWith(t *testing.T, cert string) string {
	t.Helper()
	quoted, err := json.Marshal(cert)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(fullAnswer, "CERT", string(quoted), 1)
}

func fullResponse(cert string) *helper.Response {
	return &helper.Response{
		Msg: "configured", Key: "KEYPEM", Certificate: cert, CA: "CAPEM", SSLDir: "/etc/choria/ssl",
		ServerClaims:   &tokens.ServerClaims{ChoriaIdentity: "n1.example.net", Collectives: []string{"mcollective"}, Permissions: &tokens.ServerPermissions{Submission: true}},
		Configuration:  map[string]string{"identity": "n1.example.net", "plugin.choria.server.provision": "false"},
		ActionPolicies: map[string]string{"rpcutil.policy": "policy default allow"},
		OPAPolicies:    map[string]string{"default.rego": "package choria.aaa.policy"},
		Upgrade:        "0.30.0",
	}
}

func newExec(t *testing.T, opts helper.Options) *helper.Exec {
	t.Helper()
	e, err := helper.NewExec(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestExec_DecodesEveryKeyAndPassesTheHostJSON(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	cert := certificatePEM(t, "n1.example.net")
	cmd := script(t, dir, "helper.sh", "cat > \""+in+"\"\ncat <<'END'\n"+fullAnswerWith(t, cert)+"\nEND\n")
	reg := metrics.New()
	e := newExec(t, helper.Options{Command: cmd, Site: "lon", Metrics: reg})

	req := &helper.Request{
		Identity:      "n1.example.net",
		CSR:           &rpc.CSR{CSR: "CSRPEM", PublicKey: "PUB", SSLDir: "/etc/choria/ssl"},
		ED25519PubKey: &rpc.ED25519Key{PublicKey: "abcd", Directory: "/etc/choria", Signature: "sig"},
		Inventory:     `{"version":"0.29.4","upgradable":true}`,
		JWT:           &tokens.ProvisioningClaims{Secure: true, URLs: "nats://b:4222"},
	}
	res, err := e.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := fullResponse(cert); !reflect.DeepEqual(res, want) {
		t.Fatalf("response\n got %+v\nwant %+v", res, want)
	}

	var got map[string]json.RawMessage
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("helper stdin is not JSON: %v", err)
	}
	for key, value := range map[string]string{
		"identity":       `"n1.example.net"`,
		"csr":            `{"csr":"CSRPEM","public_key":"PUB","ssldir":"/etc/choria/ssl"}`,
		"ed25519_pubkey": `{"public_key":"abcd","directory":"/etc/choria","signature":"sig"}`,
		"inventory":      `"{\"version\":\"0.29.4\",\"upgradable\":true}"`,
	} {
		if string(got[key]) != value {
			t.Errorf("stdin %s = %s, want %s", key, got[key], value)
		}
	}
	var claims tokens.ProvisioningClaims
	if err := json.Unmarshal(got["jwt"], &claims); err != nil || !claims.Secure || claims.URLs != "nats://b:4222" {
		t.Errorf("stdin jwt = %s (%v)", got["jwt"], err)
	}
	if n := helperRuns(t, reg, "lon"); n != 1 {
		t.Errorf("HelperTime observed %d runs, want 1", n)
	}
}

func TestRequest_MissingPartsAreNullAsInTheAnchor(t *testing.T) {
	data, err := json.Marshal(&helper.Request{Identity: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"identity":"n1","csr":null,"ed25519_pubkey":null,"inventory":"","jwt":null}`
	if string(data) != want {
		t.Fatalf("got %s, want %s", data, want)
	}
}

func TestExec_DeferAndShutdown(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		answer string
		want   helper.Response
	}{
		"defer":    {`{"defer": true, "msg": "not yet"}`, helper.Response{Defer: true, Msg: "not yet"}},
		"shutdown": {`{"shutdown": true, "msg": "retired"}`, helper.Response{Shutdown: true, Msg: "retired"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newExec(t, helper.Options{Command: script(t, dir, name+".sh", "cat >/dev/null\necho '"+tc.answer+"'\n")})
			res, err := e.Run(context.Background(), &helper.Request{Identity: "n1"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*res, tc.want) {
				t.Fatalf("got %+v, want %+v", *res, tc.want)
			}
		})
	}
}

func TestExec_Failures(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		body   string
		opts   helper.Options
		want   error
		inText string
	}{
		"empty output":     {body: "cat >/dev/null\n", want: helper.ErrEmptyOutput, inText: "empty output"},
		"blank output":     {body: "cat >/dev/null\necho '   '\n", want: helper.ErrEmptyOutput},
		"non-zero exit":    {body: "cat >/dev/null\necho '{}'\nexit 3\n", want: helper.ErrExit, inText: "exit status 3"},
		"invalid JSON":     {body: "cat >/dev/null\necho 'defer: yes'\n", want: helper.ErrInvalidJSON, inText: "syntax error at byte"},
		"wrong type":       {body: "cat >/dev/null\necho '{\"defer\": \"yes\"}'\n", want: helper.ErrInvalidJSON, inText: `field "defer"`},
		"oversized":        {body: "cat >/dev/null\nhead -c 5000 /dev/zero | tr '\\0' a\n", opts: helper.Options{MaxOutput: 1024}, want: helper.ErrOutputTooLarge, inText: "more than 1024 bytes"},
		"does not exist":   {want: os.ErrNotExist},
		"killed by itself": {body: "kill -9 $$\n", want: helper.ErrExit, inText: "signal: killed"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := tc.opts
			opts.Command = script(t, dir, strings.ReplaceAll(name, " ", "-")+".sh", tc.body)
			if tc.want == os.ErrNotExist {
				opts.Command = filepath.Join(dir, "missing")
			}
			e := newExec(t, opts)
			_, err := e.Run(context.Background(), &helper.Request{Identity: "n1"})
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.inText) || !strings.Contains(err.Error(), filepath.Base(opts.Command)) {
				t.Fatalf("error %q does not name the helper or say %q", err, tc.inText)
			}
		})
	}
}

func TestExec_OversizedAnswerKillsAHelperThatKeepsRunning(t *testing.T) {
	dir := t.TempDir()
	// without the kill on overflow this run would last the whole minute of its timeout
	cmd := script(t, dir, "flood.sh", "cat >/dev/null\nwhile :; do echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; done\n")
	e := newExec(t, helper.Options{Command: cmd, Timeout: time.Minute, MaxOutput: 4096})
	_, err := e.Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, helper.ErrOutputTooLarge) {
		t.Fatalf("error %v, want ErrOutputTooLarge", err)
	}
}

func TestExec_StderrIsLoggedButStdoutSecretsNeverAre(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "leaky.sh", `cat >/dev/null
echo "cannot reach the CMDB at cmdb.example.net" >&2
echo '{"key": "-----BEGIN PRIVATE KEY-----\nSTDOUTSECRET\n-----END PRIVATE KEY-----", "certificate": "STDOUTCERT"}'
exit 2
`)
	log, buf := testkit.NewLogger()
	e := newExec(t, helper.Options{Command: cmd + " --api-token ARGSECRET", Logger: log})
	_, err := e.Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, helper.ErrExit) {
		t.Fatalf("error %v, want ErrExit", err)
	}
	logged := buf.String()
	if !strings.Contains(logged, "cannot reach the CMDB") || !strings.Contains(logged, "level=WARN") || !strings.Contains(logged, "identity=n1") {
		t.Fatalf("stderr not logged at warn: %s", logged)
	}
	for _, secret := range []string{"STDOUTSECRET", "STDOUTCERT", "ARGSECRET"} {
		if strings.Contains(logged, secret) || strings.Contains(err.Error(), secret) {
			t.Fatalf("%s leaked: log %q error %q", secret, logged, err)
		}
	}
}

func TestExec_InvalidJSONErrorDoesNotQuoteTheAnswer(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "bad.sh", "cat >/dev/null\necho 'SECRETKEYMATERIAL'\n")
	_, err := newExec(t, helper.Options{Command: cmd}).Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, helper.ErrInvalidJSON) {
		t.Fatalf("error %v, want ErrInvalidJSON", err)
	}
	// json's own message would quote the first character: invalid character 'S'
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "'S'") {
		t.Fatalf("error quotes the answer: %q", err)
	}
}

func TestExec_StderrSecretsAreRedactedAndBounded(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "chatty.sh", `cat >/dev/null
echo "-----BEGIN RSA PRIVATE KEY-----" >&2
echo "MIIEpAIBAAKCAQEAx" >&2
echo "-----END RSA PRIVATE KEY-----" >&2
echo "token eyJhbGciOiJFUzI1NiJ9.eyJjaHQiOiJzM2NyM3QifQ.c2lnbmF0dXJl used" >&2
echo "seed 0123456789abcdef0123456789abcdef0123456789abcdef" >&2
head -c 100000 /dev/zero | tr '\0' 'x' | fold -w 30 >&2
echo '{"msg": "ok"}'
`)
	log, buf := testkit.NewLogger()
	if _, err := newExec(t, helper.Options{Command: cmd, Logger: log}).Run(context.Background(), &helper.Request{Identity: "n1"}); err != nil {
		t.Fatal(err)
	}
	logged := buf.String()
	for _, secret := range []string{"MIIEpAIBAAKCAQEAx", "eyJjaHQiOiJzM2NyM3QifQ", "0123456789abcdef0123456789abcdef"} {
		if strings.Contains(logged, secret) {
			t.Fatalf("%s leaked: %s", secret, logged)
		}
	}
	if !strings.Contains(logged, "[redacted PEM block]") || !strings.Contains(logged, "[redacted JWT]") || !strings.Contains(logged, "token") {
		t.Fatalf("redaction markers missing: %s", logged)
	}
	if len(logged) > 8192 {
		t.Fatalf("logged %d bytes of stderr, want it bounded", len(logged))
	}
}

func TestExec_TimeoutKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// the child holds no pipe of ours, so only a kill of the whole group ends it
	cmd := script(t, dir, "stuck.sh", `cat >/dev/null
sleep 300 >/dev/null 2>&1 </dev/null &
echo $! > "`+pidFile+`"
wait
`)
	reg := metrics.New()
	// long enough for sh to start its child on a loaded machine; nothing else waits on it
	e := newExec(t, helper.Options{Command: cmd, Timeout: time.Second, Metrics: reg, Site: "lon"})
	_, err := e.Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, helper.ErrTimeout) || !strings.Contains(err.Error(), "stuck.sh") {
		t.Fatalf("error %v, want a timeout naming stuck.sh", err)
	}
	waitGone(t, readPID(t, pidFile))
	if n := helperRuns(t, reg, "lon"); n != 1 {
		t.Errorf("HelperTime observed %d runs, want 1 (failed runs count too)", n)
	}
}

func TestExec_CallerCancelStopsTheHelper(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "helper.pid")
	cmd := script(t, dir, "slow.sh", "echo $$ > \""+pidFile+"\"\nexec sleep 300\n")
	e := newExec(t, helper.Options{Command: cmd, Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, &helper.Request{Identity: "n1"})
		done <- err
	}()
	waitFile(t, pidFile, "\n")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	waitGone(t, readPID(t, pidFile))
}

func TestExec_QuotedArguments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "with space")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := script(t, dir, "args.sh", `cat >/dev/null
printf '{"msg": "%s|%s|%s", "configuration": {"argc": "%s"}}\n' "$1" "$2" "$3" "$#"
`)
	e := newExec(t, helper.Options{Command: `"` + path + `" 'two words' "it's" plain\ escaped`})
	res, err := e.Run(context.Background(), &helper.Request{Identity: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg != "two words|it's|plain escaped" || res.Configuration["argc"] != "3" {
		t.Fatalf("arguments arrived as %q (%s of them)", res.Msg, res.Configuration["argc"])
	}
}

func TestNewExec_RefusesBadCommands(t *testing.T) {
	for _, cmd := range []string{"", "   ", `helper "unterminated`} {
		if _, err := helper.NewExec(helper.Options{Command: cmd}); err == nil {
			t.Errorf("command %q accepted", cmd)
		}
	}
	if _, err := helper.NewExec(helper.Options{Command: "h", Timeout: -time.Second}); err == nil {
		t.Error("negative timeout accepted")
	}
	// the command line may hold a secret; the parse error must not echo it
	_, err := helper.NewExec(helper.Options{Command: `helper --token 's3cr3t`})
	if err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error %v", err)
	}
}
