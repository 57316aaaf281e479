// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed96588659/muster/edge/helper"
	"github.com/seed96588659/muster/pkg/metrics"
	"github.com/seed96588659/muster/pkg/testkit"
)

// lineHelper is a persistent helper in sh whose behaviour each request picks by its identity.
// Every process appends its pid to DIR/starts and starts a child (pid in DIR/children) that
// holds none of our pipes, so only a kill of the process group ends it.
const lineHelper = `dir=$(dirname "$0")
echo $$ >> "$dir/starts"
sleep 300 </dev/null >/dev/null 2>&1 &
echo $! >> "$dir/children"
` + shID + `# readahead holds back an answer until the next request was read, so that one is in flight
readahead() { echo "$line" >> "$dir/seen"; IFS= read -r next; echo "$next" >> "$dir/held"; }
while IFS= read -r line; do
  rid "$line"
  case "$line" in
    *'"identity":"hold'*) echo "$line" >> "$dir/held" ;;
    *'"identity":"gate'*) echo "$line" >> "$dir/gated"; read -r _ < "$dir/gate"; printf '{"id":%s,"msg":"ok gate"}\n' "$id" ;;
    *'"identity":"die'*) echo "dying on request" >&2; exit 3 ;;
    *'"identity":"bad'*) readahead; echo 'this is not json' ;;
    *'"identity":"empty'*) readahead; echo '' ;;
    *'"identity":"big'*) readahead; head -c 5000 /dev/zero | tr '\0' a; echo ;;
    *'"identity":"fail'*) printf '{"id":%s,"error":"no CMDB record"}\n' "$id" ;;
    *'"identity":"stray'*) printf '{"id":%s,"msg":"one"}\n' "$id"; printf '{"id":%s,"msg":"two"}\n' "$id" ;;
    *) printf '{"id":%s,"msg":"ok %s","configuration":{"identity":"%s"}}\n' "$id" "$ident" "$ident" ;;
  esac
done
`

type lineFixture struct {
	dir string
	p   *helper.Persistent
	log *testkit.LogBuffer
	reg *metrics.Registry
}

func newLineFixture(t *testing.T, opts helper.Options) *lineFixture {
	t.Helper()
	f := &lineFixture{dir: t.TempDir(), reg: metrics.New()}
	var log = opts.Logger
	if log == nil {
		log, f.log = testkit.NewLogger()
	}
	opts.Logger, opts.Metrics, opts.Site = log, f.reg, "lon"
	opts.Command = script(t, f.dir, "line.sh", lineHelper)
	p, err := helper.NewPersistent(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	t.Cleanup(func() {
		p.Close()
		// whatever a test did, Close leaves no helper or child behind
		for _, name := range []string{"starts", "children"} {
			for _, pid := range f.pids(t, name) {
				waitGone(t, pid)
			}
		}
	})
	return f
}

func (f *lineFixture) pids(t *testing.T, name string) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, l := range strings.Fields(string(data)) {
		var pid int
		if _, err := fmt.Sscan(l, &pid); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// wantStarts checks that the helper was started want times.
func (f *lineFixture) wantStarts(t *testing.T, want int) {
	t.Helper()
	if n := len(f.pids(t, "starts")); n != want {
		t.Errorf("helper started %d times, want %d", n, want)
	}
}

func (f *lineFixture) mustAnswer(t *testing.T, id string) {
	t.Helper()
	res, err := f.p.Run(context.Background(), &helper.Request{Identity: id})
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	if res.Msg != "ok "+id {
		t.Fatalf("%s got the answer %q", id, res.Msg)
	}
}

// hold sends a request the helper never answers and returns once the helper has read it.
func (f *lineFixture) hold(t *testing.T, id string) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := f.p.Run(context.Background(), &helper.Request{Identity: id})
		done <- err
	}()
	waitFile(t, filepath.Join(f.dir, "held"), `"identity":"`+id+`"`)
	return done
}

func TestPersistent_DecodesEveryKey(t *testing.T) {
	dir := t.TempDir()
	var line bytes.Buffer
	cert := certificatePEM(t, "n1.example.net")
	if err := json.Compact(&line, []byte(fullAnswerWith(t, cert))); err != nil {
		t.Fatal(err)
	}
	answer := filepath.Join(dir, "answer.json")
	writeFile(t, answer, line.String())
	// the answer is the file with the request's id put in front
	cmd := script(t, dir, "full.sh", shID+`while IFS= read -r line; do
  rid "$line"; printf '{"id":%s,' "$id"; tail -c +2 "`+answer+`"; echo
done
`)
	p, err := helper.NewPersistent(helper.Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for range 3 {
		res, err := p.Run(context.Background(), &helper.Request{Identity: "n1.example.net"})
		if err != nil {
			t.Fatal(err)
		}
		if want := fullResponse(cert); !reflect.DeepEqual(res, want) {
			t.Fatalf("response\n got %+v\nwant %+v", res, want)
		}
	}
}

func TestPersistent_64ConcurrentCallersEachGetTheirOwnAnswer(t *testing.T) {
	f := newLineFixture(t, helper.Options{})
	const callers, each = 64, 10
	var wg sync.WaitGroup
	errs := make(chan error, callers*each)
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("node-%d-%d", c, i)
				res, err := f.p.Run(context.Background(), &helper.Request{Identity: id, Inventory: `{"facts":{"quote":"\"identity\":\"x\"","nl":"a\nb"}}`})
				switch {
				case err != nil:
					errs <- fmt.Errorf("%s: %w", id, err)
				case res.Msg != "ok "+id || res.Configuration["identity"] != id:
					errs <- fmt.Errorf("%s got the answer %q", id, res.Msg)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.wantStarts(t, 1)
	if n := helperRuns(t, f.reg, "lon"); n != callers*each {
		t.Errorf("HelperTime observed %d runs, want %d", n, callers*each)
	}
}

func TestPersistent_AHelperThatDiesIsRestartedAndItsRequestsInFlightFail(t *testing.T) {
	f := newLineFixture(t, helper.Options{})
	f.mustAnswer(t, "n1")
	held := f.hold(t, "hold-1")

	_, err := f.p.Run(context.Background(), &helper.Request{Identity: "die"})
	if !errors.Is(err, helper.ErrExit) || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "line.sh") {
		t.Fatalf("dying request: %v, want the exit status naming line.sh", err)
	}
	if err := <-held; !errors.Is(err, helper.ErrExit) {
		t.Fatalf("request in flight: %v, want ErrExit", err)
	}
	first := f.pids(t, "children")[0]
	waitGone(t, first)

	f.mustAnswer(t, "n2")
	f.wantStarts(t, 2)
	if !strings.Contains(f.log.String(), "dying on request") {
		t.Fatalf("stderr not logged: %s", f.log.String())
	}
}

// A malformed line cannot be matched to a request: every request in flight fails with its
// reason, and the helper is restarted.
func TestPersistent_MalformedLineFailsTheRequestsInFlightAndRestarts(t *testing.T) {
	for id, want := range map[string]error{
		"bad":   helper.ErrInvalidJSON,
		"empty": helper.ErrEmptyOutput,
		"big":   helper.ErrOutputTooLarge,
	} {
		t.Run(id, func(t *testing.T) {
			f := newLineFixture(t, helper.Options{MaxOutput: 1024})
			f.mustAnswer(t, "n1")
			bad := make(chan error, 1)
			go func() {
				_, err := f.p.Run(context.Background(), &helper.Request{Identity: id})
				bad <- err
			}()
			waitFile(t, filepath.Join(f.dir, "seen"), `"identity":"`+id+`"`)
			held := f.hold(t, "hold-1")
			err := <-bad
			if !errors.Is(err, want) || !strings.Contains(err.Error(), "line.sh") {
				t.Fatalf("error %v, want %v naming line.sh", err, want)
			}
			if strings.Contains(err.Error(), "this is not json") || strings.Contains(err.Error(), "aaaa") {
				t.Fatalf("error quotes the answer: %v", err)
			}
			if err := <-held; !errors.Is(err, helper.ErrRestarted) || !errors.Is(err, want) {
				t.Fatalf("request in flight: %v, want ErrRestarted and %v", err, want)
			}
			f.mustAnswer(t, "n2")
			f.wantStarts(t, 2)
		})
	}
}

func TestPersistent_ErrorLineFailsOnlyItsRequest(t *testing.T) {
	f := newLineFixture(t, helper.Options{})
	_, err := f.p.Run(context.Background(), &helper.Request{Identity: "fail-1"})
	if !errors.Is(err, helper.ErrFailed) || !strings.Contains(err.Error(), "no CMDB record") {
		t.Fatalf("error %v, want ErrFailed with the helper's reason", err)
	}
	f.mustAnswer(t, "n1")
	f.wantStarts(t, 1)
}

// A second answer with the id of an answered request is one no request in flight has.
func TestPersistent_AnAnswerNobodyAskedForRestarts(t *testing.T) {
	f := newLineFixture(t, helper.Options{})
	res, err := f.p.Run(context.Background(), &helper.Request{Identity: "stray"})
	if err != nil || res.Msg != "one" {
		t.Fatalf("stray: %+v %v", res, err)
	}
	waitLog(t, f.log, "matches no request in flight")
	f.mustAnswer(t, "n1")
	f.wantStarts(t, 2)
}

func TestPersistent_TimeoutFailsTheRequestAndRestartsTheGroup(t *testing.T) {
	// long enough for a restarted sh to answer on a loaded machine
	f := newLineFixture(t, helper.Options{Timeout: 2 * time.Second})
	f.mustAnswer(t, "n1")
	_, err := f.p.Run(context.Background(), &helper.Request{Identity: "hold-1"})
	if !errors.Is(err, helper.ErrTimeout) || !strings.Contains(err.Error(), "line.sh") {
		t.Fatalf("error %v, want a timeout naming line.sh", err)
	}
	waitGone(t, f.pids(t, "starts")[0])
	waitGone(t, f.pids(t, "children")[0])
	f.mustAnswer(t, "n2")
	f.wantStarts(t, 2)
}

func TestPersistent_ACallerThatGivesUpHasItsLateAnswerDropped(t *testing.T) {
	f := newLineFixture(t, helper.Options{})
	gate := filepath.Join(f.dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.p.Run(ctx, &helper.Request{Identity: "gate"})
		done <- err
	}()
	waitFile(t, filepath.Join(f.dir, "gated"), `"identity":"gate"`)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	next := make(chan error, 1)
	go func() {
		res, err := f.p.Run(context.Background(), &helper.Request{Identity: "n1"})
		if err == nil && res.Msg != "ok n1" {
			err = fmt.Errorf("n1 got the answer %q", res.Msg)
		}
		next <- err
	}()
	// the helper now answers the abandoned request first; it must be dropped, not paired with n1
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	f.wantStarts(t, 1)
}

func TestPersistent_CloseStopsAndReaps(t *testing.T) {
	f := newLineFixture(t, helper.Options{})
	f.mustAnswer(t, "n1")
	held := f.hold(t, "hold-1")
	if err := f.p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-held; !errors.Is(err, helper.ErrClosed) {
		t.Fatalf("request in flight: %v, want ErrClosed", err)
	}
	// Close returned only after the reap: the helper is gone at once, not eventually
	if pid := f.pids(t, "starts")[0]; !gone(pid) {
		t.Fatalf("helper %d still running after Close", pid)
	}
	waitGone(t, f.pids(t, "children")[0])
	if _, err := f.p.Run(context.Background(), &helper.Request{Identity: "n2"}); !errors.Is(err, helper.ErrClosed) {
		t.Fatalf("Run after Close: %v, want ErrClosed", err)
	}
	if err := f.p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestPersistent_CloseKillsAHelperThatIgnoresEOF(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "deaf.sh", "echo $$ > \""+dir+"/pid\"\n"+shID+"while read -r line; do rid \"$line\"; printf '{\"id\":%s}\\n' \"$id\"; done\ntrap '' TERM\nexec sleep 300\n")
	p, err := helper.NewPersistent(helper.Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), &helper.Request{Identity: "n1"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if pid := readPID(t, filepath.Join(dir, "pid")); !gone(pid) {
		t.Fatalf("helper %d still running after Close", pid)
	}
}

func TestPersistent_MissingHelperFailsEachRunWithTheCause(t *testing.T) {
	p, err := helper.NewPersistent(helper.Options{Command: filepath.Join(t.TempDir(), "missing") + " --secret XYZ"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "XYZ") {
		t.Fatalf("error %v, want ErrNotExist without the arguments", err)
	}
}

func TestPersistent_StderrIsLoggedLineByLineWithSecretsRedacted(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "noisy.sh", shID+`while read -r line; do
  rid "$line"
  echo "looking up the node in the CMDB" >&2
  echo "-----BEGIN PRIVATE KEY-----" >&2
  echo "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" >&2
  echo "SHORTLASTLINE" >&2
  echo "-----END PRIVATE KEY-----" >&2
  echo "done" >&2
  printf '{"id":%s,"key":"STDOUTSECRET"}\n' "$id"
done
`)
	log, buf := testkit.NewLogger()
	p, err := helper.NewPersistent(helper.Options{Command: cmd, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), &helper.Request{Identity: "n1"})
	if err != nil || res.Key != "STDOUTSECRET" {
		t.Fatalf("%+v %v", res, err)
	}
	waitLog(t, buf, "stderr=done")
	logged := buf.String()
	if !strings.Contains(logged, "looking up the node in the CMDB") || !strings.Contains(logged, "[redacted PEM block]") {
		t.Fatalf("stderr not logged: %s", logged)
	}
	for _, secret := range []string{"MIIEvQIBADAN", "SHORTLASTLINE", "STDOUTSECRET"} {
		if strings.Contains(logged, secret) {
			t.Fatalf("%s leaked: %s", secret, logged)
		}
	}
}
