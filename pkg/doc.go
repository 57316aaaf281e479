// SPDX-License-Identifier: Apache-2.0

// Package pkg is the root of Muster's shared module: rpc, rpmversion, metrics, api, version,
// settings, testkit and gobuild.
package pkg
