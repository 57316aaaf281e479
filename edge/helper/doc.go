// SPDX-License-Identifier: Apache-2.0

// Package helper runs the site helper that decides each node's configuration, speaking
// choria-provisioner's helper protocol: a Request (the host JSON: identity, csr, ed25519_pubkey,
// inventory, jwt) in, a Response (defer, shutdown, msg, key, certificate, ca, ssldir,
// server_claims, configuration, action_policies, opa_policies, upgrade) out.
//
// Two runners implement Runner. Exec forks the helper for every request exactly as
// choria-provisioner does: the helper setting is split like a shell command line, the Request is
// written to the helper's stdin, its whole stdout is the Response, and it must exit 0 within the
// timeout (10 s by default). Persistent (the helper_persistent setting) starts the same command
// line once and exchanges requests and answers over its stdin and stdout, so no fork is paid per
// node.
//
// # Persistent line protocol
//
// The helper is started once with the configured command line and serves until its stdin is
// closed:
//
//   - Each request is one Request JSON object on one line of the helper's stdin, ended by "\n",
//     with one more key written first: "id", a positive integer no other request of the runner
//     has ({"id":17,"identity":"n1.example.net",...}). The edge's JSON never contains a raw
//     newline (newlines inside strings are escaped).
//   - For each request the helper writes exactly one answer line to stdout, ended by "\n": a
//     Response JSON object, or {"error":"reason"} to fail that one request (the host flow counts
//     it as a helper error) while the process keeps serving. Either carries the request's "id"
//     unchanged.
//   - Answers may come in any order: each goes to the request whose id it echoes. The edge
//     pipelines: it sends further requests before earlier ones are answered.
//   - Nothing else may be written to stdout. A line that is empty, is not a JSON object, is
//     longer than the output limit (1 MiB by default), has no "id" (ErrMissingID) or an "id" no
//     request in flight has (ErrUnmatched: unknown, or already answered) fails every request in
//     flight and restarts the helper: what its later lines claim cannot be trusted any more. A
//     line with the id of a request in flight that does not decode as a Response fails only
//     that request.
//   - A helper written before ids, which answers in order without "id", is refused (every
//     request fails with ErrMissingID, naming the field) rather than trusted to keep the order:
//     one that does not gives each node another node's configuration. choria-provisioner's
//     helpers are exec-only and unaffected.
//   - A request not answered within the timeout (10 s by default) fails, and the helper's
//     process group is killed and started again; requests in flight then fail with ErrRestarted.
//     A helper that exits is started again on the next request, after a backoff that grows
//     from 50 ms to 5 s while it keeps dying without answering.
//   - When its stdin reaches EOF the helper should exit promptly; the edge kills its process
//     group if it has not exited after a grace period.
//   - stderr is free-form diagnostics: each line is logged at warn, shortened, with the
//     configured secrets (Options.Secrets) and anything that looks like a key, certificate or
//     token redacted.
//
// Both runners refuse an answer whose certificate is not the node's (ErrWrongCertificate): the
// common name or a DNS name of its first certificate must be the request's identity. Only that
// node fails.
//
// Both runners start the helper in its own process group and kill the whole group on a timeout,
// so a helper's children do not outlive it. The helper gets PATH, HOME, LANG, LC_*, TZ, TMPDIR
// and the variables named in Options.Environment of the edge's environment, never a MUSTER_ one. Neither logs the helper's stdout: an answer can
// carry a private key. Errors name the helper by the first word of its command line only, since
// its arguments may hold secrets. The runners do not check the pause: the host flow does before
// it calls Run, as choria-provisioner's runHelper does. Each Run is observed on the HelperTime
// summary; the host flow counts HelperErrors.
package helper
