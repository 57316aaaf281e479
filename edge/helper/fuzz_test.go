// SPDX-License-Identifier: Apache-2.0

package helper

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// decodeRefusal matches every form decode's error takes: offsets, kinds, types and field names,
// never a value of the answer, which may hold a private key.
func decodeRefusal() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^helper fuzz-helper: invalid JSON: (syntax error at byte \d+ of \d+|cannot decode a JSON \S+ into \S+ \(field ".*"\)|\d+ bytes do not decode as a Response)$`)
}

// boundNote matches what truncate appends.
func boundNote() *regexp.Regexp { return regexp.MustCompile(`\.\.\. \(\d+ more bytes\)$`) }

// fuzzCertificate is a self-signed PEM certificate for cn and dns, the same on every run (an
// ed25519 key from a fixed seed signs deterministically), so seed corpora do not change.
func fuzzCertificate(f *testing.F, cn string, dns ...string) string {
	f.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, DNSNames: dns, NotBefore: at, NotAfter: at.AddDate(1, 0, 0)}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
	if err != nil {
		f.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// jsonString quotes s for a seed answer.
func jsonString(s string) string {
	return `"` + strings.NewReplacer("\\", `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// FuzzExecAnswer decodes any bytes as the answer a helper wrote to stdout, as Exec does, and
// checks the certificate it carries against a node. Nothing panics; a refusal wraps
// ErrInvalidJSON and shows only offsets, kinds and field names; a certificate is taken only when
// its first PEM block is a certificate naming the node (common name, or a DNS name in any case),
// and refused with ErrWrongCertificate otherwise; and the answer's log value shows neither its
// key, its certificate nor its CA.
func FuzzExecAnswer(f *testing.F) {
	cert := fuzzCertificate(f, "n1.example.net", "n1", "N1.Example.NET")
	other := fuzzCertificate(f, "n2.example.net")
	for _, s := range []string{
		`{"defer":false,"msg":"","key":"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIPrivateKeyBytesHere\n-----END PRIVATE KEY-----\n","certificate":` + jsonString(cert) + `,"ca":` + jsonString(cert) + `,"ssldir":"/etc/choria/ssl","configuration":{"plugin.choria.srv_domain":"example.net","identity":"n1.example.net"},"action_policies":{"default.policy":"policy_default allow"},"opa_policies":{},"upgrade":"0.30.0","server_claims":{"purpose":"choria_server","permissions":{"streams":true}}}`,
		`{"defer":true,"msg":"waiting for the CMDB"}`,
		`{"shutdown":true,"msg":"decommissioned"}`,
		`{"certificate":` + jsonString(other) + `}`,
		`{"certificate":` + jsonString(cert+other) + `}`,
		`{"certificate":` + jsonString(strings.Replace(cert, "CERTIFICATE", "PRIVATE KEY", 2)) + `}`,
		`{"certificate":"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}`,
		`{"certificate":"not PEM at all"}`,
		`{"configuration":{"a":5}}`,
		`{"configuration":{"secret.key.name":["x"]}}`,
		`{"server_claims":{"exp":"tomorrow"}}`,
		`{"server_claims":{"exp":1e999}}`,
		`{"defer":"yes"}`,
		`{"key":"-----BEGIN PRIVATE KEY-----` + "\x01" + `"}`,
		`{"Key":"k","KEY":"K","key":"last"}`,
		`[]`, `null`, ``, `{`, `{"msg":"a"}{"msg":"b"}`, "\xef\xbb\xbf{}",
	} {
		f.Add([]byte(s), "n1.example.net")
	}
	f.Add([]byte(`{"certificate":`+jsonString(cert)+`}`), "N1")
	f.Add([]byte(`{"certificate":`+jsonString(cert)+`}`), "n1.example.net.")
	refusal := decodeRefusal()
	f.Fuzz(func(t *testing.T, out []byte, identity string) {
		res := &Response{}
		if err := decode("fuzz-helper", out, res); err != nil {
			if !errors.Is(err, ErrInvalidJSON) || !refusal.MatchString(err.Error()) {
				t.Fatalf("decode refused %q with %q, want ErrInvalidJSON without the answer's values", out, err)
			}
			return
		}
		checkCertificateVerdict(t, identity, res.Certificate)

		var logged bytes.Buffer
		slog.New(slog.NewTextHandler(&logged, nil)).Info("answer", "response", res)
		for _, secret := range []string{res.Key, res.Certificate, res.CA} {
			// Short values, or values the logged fields hold themselves, prove nothing.
			if len(secret) >= 8 && !strings.Contains(res.Msg+res.Upgrade+"answer response", secret) && strings.Contains(logged.String(), secret) {
				t.Fatalf("the log line shows a key, certificate or CA: %s", logged.String())
			}
		}
	})
}

// checkCertificateVerdict fails t unless checkCertificate takes certPEM for identity exactly
// when it names the node, and refuses it with ErrWrongCertificate otherwise.
func checkCertificateVerdict(t *testing.T, identity, certPEM string) {
	t.Helper()
	err := checkCertificate("fuzz-helper", identity, certPEM)
	names := certPEM == ""
	if block, _ := pem.Decode([]byte(certPEM)); block != nil && block.Type == "CERTIFICATE" {
		if cert, perr := x509.ParseCertificate(block.Bytes); perr == nil {
			names = cert.Subject.CommonName == identity
			for _, dns := range cert.DNSNames {
				names = names || strings.EqualFold(dns, identity)
			}
		}
	}
	switch {
	case names && err != nil:
		t.Fatalf("a certificate naming %q refused: %v", identity, err)
	case !names && err == nil:
		t.Fatalf("a certificate not naming %q taken: %q", identity, certPEM)
	case err != nil && !errors.Is(err, ErrWrongCertificate):
		t.Fatalf("certificate refused without ErrWrongCertificate: %v", err)
	}
}

// FuzzPersistentAnswer reads any bytes as a persistent helper's stdout, line by line as the
// runner does, and decodes each line as its answer. Lines are framed the same whatever the read
// buffer's size (a line of more than maxOutput bytes is refused, a last line without a newline
// is no answer); the id a line echoes is read or refused naming the sentinel, never quoting the
// line; an answer decodes to a Response or a refusal (ErrInvalidJSON without values, or
// ErrFailed with the helper's reason, bounded and with the configured secret hidden).
func FuzzPersistentAnswer(f *testing.F) {
	for _, s := range []struct{ stream, secret string }{
		{`{"id":1,"defer":true,"msg":"later"}` + "\n" + `{"id":2,"certificate":"","configuration":{"a":"b"}}` + "\n", "hunter2"},
		{`{"id":3,"error":"no such node in the CMDB (token hunter2)"}` + "\r\n", "hunter2"},
		{`{"id":3,"error":"` + strings.Repeat("x", 600) + `hunter2"}` + "\n", "hunter2"},
		{`{"id":3,"error":"` + strings.Repeat("é", 300) + `"}` + "\n", "é"},
		{`{"id":4,"error":"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI\n-----END PRIVATE KEY-----"}` + "\n", "k"},
		{`{"msg":"no id"}` + "\n", ""},
		{`{"id":null}` + "\n" + `{"id":"1"}` + "\n" + `{"id":-1}` + "\n" + `{"id":1.0}` + "\n" + `{"id":18446744073709551616}` + "\n", ""},
		{`{"ID":5,"id":6}` + "\n", ""},
		{"\n", ""},
		{"   \t\r\n", ""},
		{`{"id":1}`, ""},
		{`{"id":1,"msg":"` + strings.Repeat("m", 5000) + `"}` + "\n", ""},
		{strings.Repeat("a", 4097) + "\n", ""},
		{strings.Repeat("a", 4096) + "\n" + `{"id":1}` + "\n", ""},
		{`not json` + "\n", ""},
		{`{"id":1,"defer":"no"}` + "\n", ""},
	} {
		f.Add([]byte(s.stream), s.secret)
	}
	const maxOutput = 4096
	check := answerCheck{refusal: decodeRefusal(), note: boundNote()}
	f.Fuzz(func(t *testing.T, stream []byte, secret string) {
		c, err := newCommand(Options{Command: "fuzz-helper", MaxOutput: maxOutput, Secrets: []string{secret}})
		if err != nil {
			t.Fatal(err)
		}
		p := &Persistent{cmd: c}

		big := bufio.NewReaderSize(bytes.NewReader(stream), 64<<10) // the runner's size
		small := bufio.NewReaderSize(bytes.NewReader(stream), 16)   // bufio's smallest
		var bufBig, bufSmall []byte
		for {
			var errBig, errSmall error
			bufBig, errBig = readLine(big, maxOutput, bufBig[:0])
			bufSmall, errSmall = readLine(small, maxOutput, bufSmall[:0])
			if !errors.Is(errBig, errSmall) && !errors.Is(errSmall, errBig) {
				t.Fatalf("framing depends on the buffer: %v with 64 KiB, %v with 16 bytes", errBig, errSmall)
			}
			if errBig != nil {
				if !errors.Is(errBig, ErrOutputTooLarge) && !errors.Is(errBig, io.ErrUnexpectedEOF) && !errors.Is(errBig, io.EOF) {
					t.Fatalf("readLine: %v", errBig)
				}
				return
			}
			line := bufBig
			if !bytes.Equal(line, bufSmall) {
				t.Fatalf("line %q with 64 KiB, %q with 16 bytes", line, bufSmall)
			}
			if len(line) > maxOutput || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("a line of %d bytes framed (limit %d): %q", len(line), maxOutput, line)
			}
			if len(bytes.TrimSpace(line)) == 0 {
				return // the runner restarts the helper: no later line is read
			}
			if _, err := answerID(line); err != nil {
				if !errors.Is(err, ErrInvalidJSON) && !errors.Is(err, ErrMissingID) && !errors.Is(err, ErrUnmatched) {
					t.Fatalf("answerID(%q): %v, want a protocol sentinel", line, err)
				}
				if len(line) >= 8 && strings.Contains(err.Error(), string(line)) {
					t.Fatalf("answerID quotes the line: %v", err)
				}
				return
			}
			check.answer(t, p, line, secret)
		}
	})
}

// answerCheck holds what checking an answer line needs, compiled once per fuzz run.
type answerCheck struct{ refusal, note *regexp.Regexp }

// answer fails t unless the answer line decodes to a Response or is refused as it may be.
func (ac answerCheck) answer(t *testing.T, p *Persistent, line []byte, secret string) {
	t.Helper()
	_, err := p.decode(line)
	switch {
	case err == nil:
	case errors.Is(err, ErrInvalidJSON):
		if !ac.refusal.MatchString(err.Error()) {
			t.Fatalf("answer %q refused with %q, which may show its values", line, err)
		}
	case errors.Is(err, ErrFailed):
		reason, ok := strings.CutPrefix(err.Error(), "helper fuzz-helper: "+ErrFailed.Error()+": ")
		if !ok {
			t.Fatalf("answer %q: %v", line, err)
		}
		reason = ac.note.ReplaceAllString(reason, "")
		if len(reason) > maxStderrLine+len("\uFFFD") {
			t.Fatalf("the helper's reason is not bounded to %d bytes: %d bytes", maxStderrLine, len(reason))
		}
		if hideable(secret) && strings.Contains(reason, secret) {
			t.Fatalf("the helper's reason shows the configured secret %q: %q", secret, reason)
		}
	default:
		t.Fatalf("answer %q: %v", line, err)
	}
}

// hideable is true for a secret the redaction can hide wherever the helper writes it: one that
// is no part of a marker the redaction writes, and holds no bracket, with which the text next to
// a marker could complete it.
func hideable(secret string) bool {
	markers := redactedText + "[redacted PEM block][redacted JWT]\uFFFD"
	return secret != "" && !strings.ContainsAny(secret, "[]") && !strings.Contains(markers, secret) && !strings.Contains(secret, "\uFFFD")
}

// FuzzPersistentRun runs two requests at once through a real persistent helper that, once both
// are in flight (ids 1 and 2), writes any bytes as its answers and exits. Whatever it writes,
// each request gets the answer that echoes its own id, decoded, or an error naming why (the
// helper failed it, exited or broke the protocol, the answer did not decode or its certificate
// is another node's); never another request's answer nor one the helper did not write; and an
// answer the helper wrote before breaking the protocol reaches its request.
func FuzzPersistentRun(f *testing.F) {
	script := filepath.Join(f.TempDir(), "replay.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nhead -n 2 >/dev/null\nexec cat \"$1\"\n"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"id":1,"msg":"one"}` + "\n" + `{"id":2,"msg":"two"}` + "\n",
		`{"id":2,"msg":"two"}` + "\n" + `{"id":1,"msg":"one"}` + "\n",
		`{"id":1,"msg":"one"}` + "\n" + `{"id":1,"msg":"again"}` + "\n" + `{"id":2,"msg":"two"}` + "\n",
		`{"id":2,"error":"no such node"}` + "\n" + `{"id":1,"defer":true}` + "\n",
		`{"id":3,"msg":"nobody's"}` + "\n",
		`{"msg":"no id"}` + "\n",
		`{"id":1,"msg":"one"}` + "\n\n" + `{"id":2}` + "\n",
		`{"id":1,"defer":"no"}` + "\n" + `{"id":2,"certificate":"not PEM"}` + "\n",
		`{"id":1,"msg":"` + strings.Repeat("m", 5000) + `"}` + "\n",
		`{"id":1,"msg":"one"}`,
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		answers := filepath.Join(t.TempDir(), "answers")
		if err := os.WriteFile(answers, stream, 0o600); err != nil {
			t.Fatal(err)
		}
		const maxOutput = 4096
		// The timeout only ends a run that hangs: the helper exits once it has written.
		p, err := NewPersistent(Options{Command: "'" + script + "' '" + answers + "'", Timeout: time.Minute, MaxOutput: maxOutput})
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			res *Response
			err error
		}
		results := make(chan result, 2)
		for _, node := range []string{"n1.example.net", "n2.example.net"} {
			go func() {
				res, err := p.Run(context.Background(), &Request{Identity: node})
				results <- result{res, err}
			}()
		}
		got := []result{<-results, <-results}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}

		// What the runner must have delivered: the first line for each id in flight, up to
		// the first line that breaks the protocol.
		delivered := map[uint64][]byte{}
		br := bufio.NewReader(bytes.NewReader(stream))
		for {
			line, err := readLine(br, maxOutput, nil)
			if err != nil || len(bytes.TrimSpace(line)) == 0 {
				break
			}
			id, err := answerID(line)
			if _, dup := delivered[id]; err != nil || dup || (id != 1 && id != 2) {
				break
			}
			delivered[id] = line
		}
		used := map[uint64]bool{}
		for _, r := range got {
			if r.err != nil {
				if !errors.Is(r.err, ErrExit) && !errors.Is(r.err, ErrRestarted) && !errors.Is(r.err, ErrFailed) &&
					!errors.Is(r.err, ErrInvalidJSON) && !errors.Is(r.err, ErrWrongCertificate) {
					t.Fatalf("a request failed with %v", r.err)
				}
				continue
			}
			matched := false
			for id, line := range delivered {
				if want, err := p.decode(line); err == nil && !used[id] && reflect.DeepEqual(r.res, want) {
					used[id], matched = true, true
					break
				}
			}
			if !matched {
				t.Fatalf("a request got %+v, which no answer line in flight holds (%q)", r.res, stream)
			}
		}
		for id, line := range delivered {
			if res, err := p.decode(line); err == nil && res.Certificate == "" && !used[id] {
				t.Fatalf("answer %q for request %d reached no request: %v, %v", line, id, got[0].err, got[1].err)
			}
		}
	})
}

// FuzzStderr feeds any bytes, in two writes, to what takes a helper's stderr: a persistent
// helper's line logger and an Exec's capture. Whatever the helper writes, neither the log nor
// the captured text shows the configured secret.
func FuzzStderr(f *testing.F) {
	for _, s := range []struct {
		stderr string
		split  uint16
		secret string
	}{
		{"warning: token hunter2 expired\n", 10, "hunter2"},
		{"token hunter2 " + strings.Repeat("x ", 1200) + "\n", 3, "hunter2"},
		{"token hunt\xffer2 " + strings.Repeat("x ", 300) + "\n", 0, "hunter2"},
		{strings.Repeat("a", 2040) + "hunter2 and more\n", 2045, "hunter2"},
		{"-----BEGIN PRIVATE KEY-----\nhunter2\n-----END PRIVATE KEY-----\nafter hunter2\n", 30, "hunter2"},
		{"no newline at the end hunter", 25, "hunter2"},
		{"pw\x00hunter2\r\n", 1, "hunter2"},
	} {
		f.Add([]byte(s.stderr), s.split, s.secret)
	}
	note := boundNote()
	f.Fuzz(func(t *testing.T, stderr []byte, split uint16, secret string) {
		// Only text slog writes as it is can be searched for in its output.
		if !hideable(secret) || strings.ContainsFunc(secret, func(r rune) bool { return r < ' ' || r > '~' || r == '"' || r == '\\' }) {
			return
		}
		c, err := newCommand(Options{Command: "fuzz-helper", Secrets: []string{secret}})
		if err != nil {
			t.Fatal(err)
		}
		var logged bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logged, nil))
		at := min(int(split), len(stderr))

		l := &lineLogger{log: log, helper: c.name, redact: c.redact}
		_, _ = l.Write(stderr[:at])
		_, _ = l.Write(stderr[at:])
		l.flush()
		for _, entry := range strings.Split(strings.TrimSuffix(logged.String(), "\n"), "\n") {
			if entry == "" {
				continue
			}
			_, value, ok := strings.Cut(entry, " stderr=")
			if !ok {
				t.Fatalf("log line without stderr: %s", entry)
			}
			if unquoted, err := strconv.Unquote(value); err == nil {
				value = unquoted
			}
			if strings.Contains(note.ReplaceAllString(value, ""), secret) {
				t.Fatalf("the logged stderr shows the configured secret %q: %q", secret, value)
			}
		}

		h := &headBuffer{limit: 2 * maxStderrLog, redact: c.redact}
		_, _ = h.Write(stderr[:at])
		_, _ = h.Write(stderr[at:])
		got := h.text()
		if h.dropped > 0 {
			got = strings.TrimSuffix(got, fmt.Sprintf(" (%d bytes not captured)", h.dropped))
		}
		if strings.Contains(note.ReplaceAllString(got, ""), secret) {
			t.Fatalf("the captured stderr shows the configured secret %q: %q", secret, got)
		}
	})
}
