// SPDX-License-Identifier: Apache-2.0

package realnode

import "testing"

func TestReplyStatus(t *testing.T) {
	ok, msg := replyStatus("choria_provision", []byte(`{"statuscode":1,"statusmsg":"Could not obtain provisioning lock","data":{}}`))
	if ok || msg != "Could not obtain provisioning lock" {
		t.Fatalf("aborted reply read as ok=%v %q", ok, msg)
	}
	if ok, _ := replyStatus("rpcutil", []byte(`{"statuscode":0,"statusmsg":"OK","data":{}}`)); !ok {
		t.Fatal("OK reply read as failed")
	}
	if ok, _ := replyStatus("rpcutil", []byte(`not json`)); ok {
		t.Fatal("undecodable reply read as OK")
	}
	if got := actionName("choria_provision", []byte(`{"agent":"choria_provision","action":"configure","data":{}}`)); got != "configure" {
		t.Fatalf("action %q", got)
	}
	if got := actionName("discovery", []byte(`"ping"`)); got != "ping" {
		t.Fatalf("discovery action %q", got)
	}
}
