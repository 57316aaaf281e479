// Package sandbox will hold a local Choria fleet: an embedded broker, real and emulated nodes in
// provisioning mode, and an action recorder.
package sandbox
