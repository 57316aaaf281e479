// SPDX-License-Identifier: Apache-2.0

package coordinator_test

import (
	"github.com/seed96588659/muster/coordinator"
	"github.com/seed96588659/muster/coordinator/httpapi"
)

// The HTTP layer's interface is the contract between the two helpers' packages.
var _ httpapi.Service = (*coordinator.Service)(nil)
