// SPDX-License-Identifier: Apache-2.0

package discovery

import (
	"testing"

	"github.com/choria-io/go-choria/lifecycle"
)

// FuzzStartupIdentity: whatever arrives on the startup subject (anyone on the provisioning broker
// may publish there) is decoded without a panic, and only a startup event yields an identity.
func FuzzStartupIdentity(f *testing.F) {
	e, err := lifecycle.New(lifecycle.Startup, lifecycle.Identity("n1.example.net"), lifecycle.Component("provision_mode_server"), lifecycle.Version("0.30.0"))
	if err != nil {
		f.Fatal(err)
	}
	e.SetFormat(lifecycle.CloudEventV1Format)
	cloud, err := lifecycle.ToCloudEventV1(e).MarshalJSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cloud)
	f.Add([]byte(`{"protocol":"io.choria.lifecycle.v1.startup","identity":"n2","component":"c","version":"1"}`))
	f.Add([]byte(`{"protocol":"io.choria.lifecycle.v1.shutdown","identity":"n3","component":"c"}`))
	f.Add([]byte(`{"protocol":"io.choria.lifecycle.v1.startup","identity":"n\u001b]52;c;eA==\u0007"}`))
	f.Add([]byte(`{"specversion":"1.0","type":"io.choria.lifecycle.v1.startup","data":null}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := startupIdentity(data)
		if err != nil {
			return
		}
		if id == "" {
			return
		}
		e, err := lifecycle.NewFromJSON(data)
		if err != nil || e.Type() != lifecycle.Startup {
			t.Fatalf("identity %q from an event that is no startup event: %v", id, err)
		}
	})
}
