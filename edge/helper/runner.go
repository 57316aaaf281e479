// SPDX-License-Identifier: Apache-2.0

package helper

import "context"

// Runner asks the site helper for one node's configuration.
type Runner interface {
	// Run sends req to the helper and returns its decoded answer.
	Run(ctx context.Context, req *Request) (*Response, error)
	// Close releases the helper; Run fails with ErrClosed afterwards.
	Close() error
}
