// SPDX-License-Identifier: Apache-2.0

package helper_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/seed96588659/muster/edge/helper"
)

// shID defines, for sh helpers, rid LINE: sets id to the request's "id" (the edge writes it
// first), 0 when the line has none, and ident to its identity.
const shID = `rid() {
  case "$1" in '{"id":'*) id=${1#'{"id":'}; id=${id%%,*} ;; *) id=0 ;; esac
  ident=${1#*\"identity\":\"}; ident=${ident%%\"*}
}
`

// runBoth sends a and b at once and returns their answers' messages, or their errors.
func runBoth(t *testing.T, p *helper.Persistent, a, b string) (map[string]string, map[string]error) {
	t.Helper()
	type result struct {
		id  string
		msg string
		err error
	}
	out := make(chan result, 2)
	for _, id := range []string{a, b} {
		go func() {
			res, err := p.Run(context.Background(), &helper.Request{Identity: id})
			r := result{id: id, err: err}
			if res != nil {
				r.msg = res.Msg
			}
			out <- r
		}()
	}
	msgs, errs := map[string]string{}, map[string]error{}
	for range 2 {
		r := <-out
		if r.err != nil {
			errs[r.id] = r.err
		} else {
			msgs[r.id] = r.msg
		}
	}
	return msgs, errs
}

// TestPersistent_AnswersOutOfOrderReachTheirOwnRequests: a helper that answers two requests
// in the opposite order still gives each node its own answer; answers are matched by the id
// the edge put in each request, not by their order.
func TestPersistent_AnswersOutOfOrderReachTheirOwnRequests(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "reverse.sh", shID+`while IFS= read -r one && IFS= read -r two; do
  rid "$one"; id1=$id; ident1=$ident
  rid "$two"
  printf '{"id":%s,"msg":"ok %s"}\n' "$id" "$ident"
  printf '{"id":%s,"msg":"ok %s"}\n' "$id1" "$ident1"
done
`)
	p, err := helper.NewPersistent(helper.Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for round := range 3 {
		a, b := fmt.Sprintf("a%d.example.net", round), fmt.Sprintf("b%d.example.net", round)
		msgs, errs := runBoth(t, p, a, b)
		for id, err := range errs {
			t.Fatalf("%s: %v", id, err)
		}
		for _, id := range []string{a, b} {
			if msgs[id] != "ok "+id {
				t.Errorf("%s got the answer %q", id, msgs[id])
			}
		}
	}
}

// TestPersistent_AnAnswerWithAnUnknownIdIsRefusedAndRestarts: an answer whose id no request in
// flight has fails the requests in flight and restarts the helper, whose pairing cannot be trusted.
func TestPersistent_AnAnswerWithAnUnknownIdIsRefusedAndRestarts(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "wrong.sh", shID+`echo $$ >> "`+dir+`/starts"
while IFS= read -r line; do
  rid "$line"
  case "$ident" in
    wrong*) printf '{"id":%s,"msg":"ok %s"}\n' "$((id + 1000))" "$ident" ;;
    *) printf '{"id":%s,"msg":"ok %s"}\n' "$id" "$ident" ;;
  esac
done
`)
	p, err := helper.NewPersistent(helper.Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if res, err := p.Run(context.Background(), &helper.Request{Identity: "n1"}); err != nil || res.Msg != "ok n1" {
		t.Fatalf("n1: %+v %v", res, err)
	}
	_, err = p.Run(context.Background(), &helper.Request{Identity: "wrong"})
	if !errors.Is(err, helper.ErrRestarted) || !errors.Is(err, helper.ErrUnmatched) || !strings.Contains(err.Error(), "wrong.sh") {
		t.Fatalf("error %v, want ErrRestarted and ErrUnmatched naming wrong.sh", err)
	}
	if res, err := p.Run(context.Background(), &helper.Request{Identity: "n2"}); err != nil || res.Msg != "ok n2" {
		t.Fatalf("n2 after the restart: %+v %v", res, err)
	}
	fx := &lineFixture{dir: dir}
	fx.wantStarts(t, 2)
}

// TestPersistent_AnAnswerWithoutAnIdIsRefusedNamingTheField: a helper written before ids (it
// answers in order, without "id") is refused with an error that says what is missing, rather
// than trusted to be in order.
func TestPersistent_AnAnswerWithoutAnIdIsRefusedNamingTheField(t *testing.T) {
	dir := t.TempDir()
	cmd := script(t, dir, "old.sh", `while IFS= read -r line; do echo '{"msg":"ok"}'; done
`)
	p, err := helper.NewPersistent(helper.Options{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Run(context.Background(), &helper.Request{Identity: "n1"})
	if !errors.Is(err, helper.ErrMissingID) || !strings.Contains(err.Error(), `"id"`) || !strings.Contains(err.Error(), "old.sh") {
		t.Fatalf("error %v, want ErrMissingID naming the \"id\" field and old.sh", err)
	}
}
