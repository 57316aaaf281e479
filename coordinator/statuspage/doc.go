// SPDX-License-Identifier: Apache-2.0

// Package statuspage serves the coordinator's read-only status page: static HTML, CSS and
// JavaScript embedded in the binary that poll the admin API of the member that served them.
// The assets hold no data and no secret, so they are served to anyone; every figure the page
// shows comes from the admin reads, which need an admin token of any role (typed once into the page
// and kept in the tab's sessionStorage) or a reader's or admin's verified client certificate. See DESIGN.md.
package statuspage
