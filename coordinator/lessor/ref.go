// SPDX-License-Identifier: Apache-2.0

package lessor

// Ref names the lease a renewal or report is for, and who asks: the ledger refuses the request
// unless the lease is outstanding under Token and, when set, held by Edge in Region.
type Ref struct {
	ID     string
	Token  uint64
	Edge   string
	Region string
}
