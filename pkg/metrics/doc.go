// SPDX-License-Identifier: Apache-2.0

// Package metrics holds a per-process Prometheus registry with every metric choria-provisioner
// exports, under the same names, help texts and `site` label, so its Grafana dashboard keeps
// working against Muster. Nothing is registered at package level: each process (and each test)
// builds its own Registry, and further `muster_` collectors join through Registerer.
package metrics
