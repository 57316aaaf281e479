// SPDX-License-Identifier: Apache-2.0

package benchreport

import "testing"

func TestInvocation_CommandQuotesWhatAShellWouldRead(t *testing.T) {
	inv := Invocation{
		Module: "sandbox", Env: []string{"MUSTER_BENCH_NODES=1000", "MUSTER_CHORIA_PROVISIONER_BIN=/tmp/my builds/choria-provisioner"},
		Package: "./edgebench", Bench: "^BenchmarkEdge$/^exec$", BenchTime: "1x", Timeout: "30m",
	}
	want := `cd sandbox && MUSTER_BENCH_NODES=1000 'MUSTER_CHORIA_PROVISIONER_BIN=/tmp/my builds/choria-provisioner' go test -run '^$' -bench '^BenchmarkEdge$/^exec$' -benchtime 1x -timeout 30m ./edgebench`
	if got := inv.Command(); got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
}
