// SPDX-License-Identifier: Apache-2.0

// Package keys holds the credential work of the edge's host flow: validating a node's
// provisioning JWT, signing its server JWT, encrypting the helper's private key for it, and
// validating its CSR against the certificate deny list.
//
// Keys and tokens are files an operator rotates. They are re-read when stat says they changed
// (device, inode, size, mtime, ctime; a file modified in the last two seconds is re-read at each
// check, as its stamp may not yet tell versions apart), at most once per Reload.Interval, so
// rotation needs no restart and the hot path costs one stat, or nothing, instead of a read and a
// parse. Rotate by writing a new file and renaming it over the old one. A file that no longer
// reads or parses fails every node with an error naming the configuration key and path; the last
// good key is not used meanwhile, so a botched rotation is loud rather than silently signing with
// a retired key.
package keys
