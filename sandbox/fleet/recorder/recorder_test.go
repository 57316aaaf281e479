// SPDX-License-Identifier: Apache-2.0

package recorder

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	childEnv   = "RECORDER_TEST_CHILD"
	perProcess = 500
)

// TestMain lets the test binary act as a second writer process.
func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		os.Exit(childWrite(path, os.Getenv(childEnv+"_NAME")))
	}
	os.Exit(m.Run())
}

func childWrite(path, name string) int {
	r, err := Open(path, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perProcess / 4 {
				if err := r.Write(Action{Time: time.Now(), Region: "eu", Node: fmt.Sprintf("%s-%d", name, g), Action: "rpcutil#inventory", Caller: "choria=" + strconv.Itoa(i) + strings.Repeat("x", 300), OK: true}); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		return 1
	}
	return 0
}

func TestRecorder_ManyProcessesAppendWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "actions.jsonl")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const procs = 4
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+path, fmt.Sprintf("%s_NAME=p%d", childEnv, p))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	// this process writes too, while the children do
	if code := childWrite(path, "parent"); code != 0 {
		t.Fatalf("parent writer exited %d", code)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child writer: %v", err)
		}
	}

	actions, err := ReadFile(path)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if len(actions) != (procs+1)*perProcess {
		t.Fatalf("read %d actions, want %d", len(actions), (procs+1)*perProcess)
	}
	per := map[string]int{}
	for _, a := range actions {
		per[strings.SplitN(a.Node, "-", 2)[0]]++
	}
	for _, name := range []string{"p0", "p1", "p2", "p3", "parent"} {
		if per[name] != perProcess {
			t.Errorf("writer %s: %d lines, want %d", name, per[name], perProcess)
		}
	}
}

func TestAction_TimeKeepsNanoseconds(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 1, 2, 120000000, time.FixedZone("x", 3600))
	b, err := Action{Time: at, Node: "n1", Action: "choria_provision#restart", OK: false, Error: "boom"}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"time":"2026-11-29T14:01:02.120000000Z"`) {
		t.Fatalf("time not written with nine digits in UTC: %s", b)
	}
	got, err := Read(strings.NewReader(string(b) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Time.Equal(at) || got[0].Error != "boom" || got[0].Action != "choria_provision#restart" {
		t.Fatalf("round trip lost data: %+v", got)
	}
}

func TestRead_NamesBadLine(t *testing.T) {
	_, err := Read(strings.NewReader(`{"time":"2026-11-29T14:01:02Z","node":"a"}` + "\n{oops\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("want error naming line 2, got %v", err)
	}
}

func TestRecorder_WriteAfterCloseFails(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "a.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(Action{Node: "n"}); err == nil {
		t.Fatal("write after close succeeded")
	}
	if r.Failed() != 1 {
		t.Fatalf("failed = %d, want 1", r.Failed())
	}
}
