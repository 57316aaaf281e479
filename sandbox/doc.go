// SPDX-License-Identifier: Apache-2.0

// Package sandbox holds a local Choria fleet for Muster's tests, benchmarks and `make run`.
//
// Following one node through it: lab starts, per region, an embedded provisioning broker
// (broker, with a throwaway CA and JWT signer from pki), real go-choria servers in provisioning
// mode, each its own process from its own binary copy (realnode, run by the hidden
// `muster-sandbox node` command), and an emulated fleet (emulated, faults). Every action a node
// receives is appended to DIR/actions.jsonl (recorder) and summarised by report; updates serves
// the newer node binary for release_update. cmd/muster-sandbox is the command line, and
// NOTES-lab.md describes the Go API the tests use.
package sandbox
