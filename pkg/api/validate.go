// SPDX-License-Identifier: Apache-2.0

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits a server enforces on every request. A request beyond the request-wide ones is refused
// whole; a node or result beyond the per-item ones is refused alone, by name, and the rest of its
// request is recorded (SplitNodes, SplitResults). Nothing is truncated by the server.
const (
	MaxNameLength     = 253              // identity, region, edge, lease id: a DNS name's length
	MaxRegisterNodes  = 10000            // nodes in one RegisterRequest
	MaxLeaseNodes     = 10000            // max_nodes of one AcquireRequest
	MaxWait           = 5 * time.Minute  // wait of one AcquireRequest
	MaxErrorLength    = 4096             // error text of one NodeResult
	MaxVersionLength  = 128              // a version string
	MaxFactsSize      = 64 * 1024        // facts of one RegisterNode, in bytes
	MaxPauseReason    = 1024             // reason of a PauseRequest
	maxHeartbeatLease = MaxRegisterNodes // leases listed in one heartbeat
	MaxCarriedReports = 64               // reports one AcquireRequest carries
)

// ValidateName checks an identity, region, edge or lease id: non-empty, bounded, printable, no spaces.
func ValidateName(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s: must not be empty", field)
	}
	if len(v) > MaxNameLength {
		return fmt.Errorf("%s: %d bytes, longer than %d", field, len(v), MaxNameLength)
	}
	if !utf8.ValidString(v) {
		// Ranging would read the bad bytes as U+FFFD, which is printable.
		return fmt.Errorf("%s: %q is not valid UTF-8", field, v)
	}
	for _, r := range v {
		if r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("%s: %q contains %q, which is not allowed", field, v, r)
		}
	}
	return nil
}

// The per-item checks below name the item (nodes[7].identity) only once one fails: formatting the
// name up front cost two allocations per node of every request.

// Validate checks the registration as a whole; its nodes are checked one by one (SplitNodes), so
// one bad node never blocks a region's discovery.
func (r *RegisterRequest) Validate() error {
	if err := ValidateName("region", r.Region); err != nil {
		return err
	}
	if err := ValidateName("edge", r.Edge); err != nil {
		return err
	}
	if len(r.Nodes) == 0 {
		return errors.New("nodes: must list at least one node")
	}
	if len(r.Nodes) > MaxRegisterNodes {
		return fmt.Errorf("nodes: %d nodes, more than %d in one request", len(r.Nodes), MaxRegisterNodes)
	}
	return nil
}

// CheckNode is why node n, listed as nodes[i], is refused, or nil.
func CheckNode(i int, n RegisterNode) error {
	if err := ValidateName("identity", n.Identity); err != nil {
		return fmt.Errorf("nodes[%d].%w", i, err)
	}
	if err := validateText("version", n.Version, MaxVersionLength); err != nil {
		return fmt.Errorf("nodes[%d].%w", i, err)
	}
	if len(n.Facts) > MaxFactsSize {
		return fmt.Errorf("nodes[%d].facts: %d bytes, more than %d", i, len(n.Facts), MaxFactsSize)
	}
	if len(n.Facts) > 0 && !json.Valid(n.Facts) {
		return fmt.Errorf("nodes[%d].facts: not valid JSON", i)
	}
	return nil
}

// SplitNodes returns the nodes every check passes and refuses each other one by name: a bad
// field (CheckNode) or a repeat of an earlier node.
func (r *RegisterRequest) SplitNodes() (ok []RegisterNode, rejected []RejectedResult) {
	return split(r.Nodes, "nodes", func(n RegisterNode) string { return n.Identity }, CheckNode)
}

// split keeps the items of list (the request's field of that name) that check passes and
// refuses each other one by its identity: a bad field, or a repeat of an earlier item's identity.
func split[T any](items []T, list string, identity func(T) string, check func(int, T) error) (ok []T, rejected []RejectedResult) {
	ok = make([]T, 0, len(items))
	seen := make(map[string]int, len(items))
	for i, it := range items {
		id := identity(it)
		err := check(i, it)
		if j, dup := seen[id]; err == nil && dup {
			err = fmt.Errorf("%s[%d].identity: %q repeats %s[%d]", list, i, id, list, j)
		}
		if err != nil {
			rejected = append(rejected, RejectedResult{Identity: id, Reason: err.Error()})
			continue
		}
		seen[id] = i
		ok = append(ok, it)
	}
	return ok, rejected
}

// Validate checks every field of an acquire.
func (r *AcquireRequest) Validate() error {
	if err := ValidateName("edge", r.Edge); err != nil {
		return err
	}
	if err := ValidateName("region", r.Region); err != nil {
		return err
	}
	if r.MaxNodes < 1 || r.MaxNodes > MaxLeaseNodes {
		return fmt.Errorf("max_nodes: %d is outside 1..%d", r.MaxNodes, MaxLeaseNodes)
	}
	if r.Wait < 0 || r.Wait.Std() > MaxWait {
		return fmt.Errorf("wait: %s is outside 0..%s", r.Wait, MaxWait)
	}
	if r.RequestID != "" {
		if err := ValidateName("request_id", r.RequestID); err != nil {
			return err
		}
	}
	return r.validateReports()
}

// validateReports checks the reports an acquire carries: each is a valid report of the
// acquire's edge and region with its own request id (the edge sends it again alone, under that
// id, when the acquire's answer is lost), none twice, and results within one lease's bound.
func (r *AcquireRequest) validateReports() error {
	if len(r.Reports) > MaxCarriedReports {
		return fmt.Errorf("reports: %d reports, more than %d in one acquire", len(r.Reports), MaxCarriedReports)
	}
	ids := make(map[string]bool, len(r.Reports))
	results := 0
	for i := range r.Reports {
		rep := &r.Reports[i]
		if err := rep.Validate(); err != nil {
			return fmt.Errorf("reports[%d].%w", i, err)
		}
		switch {
		case rep.RequestID == "":
			return fmt.Errorf("reports[%d].request_id: must not be empty in a report an acquire carries", i)
		case ids[rep.RequestID]:
			return fmt.Errorf("reports[%d].request_id: %q is carried twice", i, rep.RequestID)
		case rep.Edge != r.Edge || rep.Region != r.Region:
			return fmt.Errorf("reports[%d]: edge %q in %q is not the acquire's %q in %q", i, rep.Edge, rep.Region, r.Edge, r.Region)
		}
		ids[rep.RequestID] = true
		results += len(rep.Results)
	}
	if results > MaxLeaseNodes {
		return fmt.Errorf("reports: %d results, more than %d in one acquire", results, MaxLeaseNodes)
	}
	return nil
}

func validateLeaseRef(id string, token uint64, edge, region string) error {
	if err := ValidateName("lease_id", id); err != nil {
		return err
	}
	if token == 0 {
		return errors.New("token: must not be 0 (the token is the Raft index of the grant)")
	}
	if err := ValidateName("edge", edge); err != nil {
		return err
	}
	return ValidateName("region", region)
}

// Validate checks every field of a renewal.
func (r *RenewRequest) Validate() error {
	return validateLeaseRef(r.LeaseID, r.Token, r.Edge, r.Region)
}

// Validate checks the report as a whole; its results are checked one by one (SplitResults), so
// one bad result never blocks the others of its lease.
func (r *ReportRequest) Validate() error {
	if err := validateLeaseRef(r.LeaseID, r.Token, r.Edge, r.Region); err != nil {
		return err
	}
	if r.RequestID != "" {
		if err := ValidateName("request_id", r.RequestID); err != nil {
			return err
		}
	}
	if len(r.Results) == 0 {
		return errors.New("results: must list at least one result")
	}
	if len(r.Results) > MaxLeaseNodes {
		return fmt.Errorf("results: %d results, more than %d in one request", len(r.Results), MaxLeaseNodes)
	}
	return nil
}

// CheckResult is why result res, listed as results[i], is refused, or nil.
func CheckResult(i int, res NodeResult) error {
	if err := ValidateName("identity", res.Identity); err != nil {
		return fmt.Errorf("results[%d].%w", i, err)
	}
	if !res.Outcome.Valid() {
		return fmt.Errorf("results[%d].outcome: %q is not one of %v", i, res.Outcome, Outcomes())
	}
	if err := validateText("error", res.Error, MaxErrorLength); err != nil {
		return fmt.Errorf("results[%d].%w", i, err)
	}
	if err := validateText("version", res.Version, MaxVersionLength); err != nil {
		return fmt.Errorf("results[%d].%w", i, err)
	}
	return nil
}

// SplitResults returns the results every check passes and refuses each other one by name: a bad
// field (CheckResult) or a second result for the same node.
func (r *ReportRequest) SplitResults() (ok []NodeResult, rejected []RejectedResult) {
	return split(r.Results, "results", func(res NodeResult) string { return res.Identity }, CheckResult)
}

// Validate checks every field of a heartbeat.
func (r *HeartbeatRequest) Validate() error {
	if err := ValidateName("edge", r.Edge); err != nil {
		return err
	}
	if err := ValidateName("region", r.Region); err != nil {
		return err
	}
	if len(r.Leases) > maxHeartbeatLease {
		return fmt.Errorf("leases: %d leases, more than %d", len(r.Leases), maxHeartbeatLease)
	}
	for i, id := range r.Leases {
		if err := ValidateName("", id); err != nil {
			return fmt.Errorf("leases[%d]%w", i, err) // the unnamed field's message starts ": "
		}
	}
	return nil
}

// Validate checks a node filter.
func (f *NodeFilter) Validate() error {
	if f.Region != "" {
		if err := ValidateName("region", f.Region); err != nil {
			return err
		}
	}
	if f.State != "" && !f.State.Valid() {
		return fmt.Errorf("state: %q is not one of %v", f.State, NodeStates())
	}
	if f.Limit < 0 {
		return fmt.Errorf("limit: %d is negative", f.Limit)
	}
	return nil
}

// Validate checks a pause.
func (r *PauseRequest) Validate() error {
	return validateText("reason", r.Reason, MaxPauseReason)
}

// Validate checks a join.
func (r *JoinRequest) Validate() error {
	if err := ValidateName("id", r.ID); err != nil {
		return err
	}
	if err := ValidateName("raft_address", r.RaftAddress); err != nil {
		return err
	}
	return ValidateBaseURL("api_address", r.APIAddress)
}

// ValidateBaseURL checks a member's API address: an http or https URL with a host and no path.
func ValidateBaseURL(field, v string) error {
	if !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		return fmt.Errorf("%s: %q must start with http:// or https://", field, v)
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Errorf("%s: %q is not a URL: %w", field, v, err)
	}
	if u.Host == "" {
		return fmt.Errorf("%s: %q has no host", field, v)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: %q must be scheme://host:port only", field, v)
	}
	return nil
}

// Validate checks a removal.
func (r *RemoveRequest) Validate() error {
	return ValidateName("id", r.ID)
}

// cutSuffix marks an error text FitResult shortened.
const cutSuffix = " [cut]"

// FitResult returns res with the fields the API would refuse made to fit, and a note per change,
// so an edge never sends a result the coordinator refuses: control characters are escaped
// (Printable), an over-long error is cut (it is a message for people), a version that does not
// fit is dropped (a cut version would be a wrong one).
func FitResult(res NodeResult) (NodeResult, []string) {
	var notes []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"error", &res.Error}, {"version", &res.Version}} {
		if p := Printable(*f.v); p != *f.v {
			notes = append(notes, f.name+": control characters escaped")
			*f.v = p
		}
	}
	if len(res.Error) > MaxErrorLength {
		cut := MaxErrorLength - len(cutSuffix)
		for cut > 0 && !utf8.RuneStart(res.Error[cut]) {
			cut--
		}
		notes = append(notes, fmt.Sprintf("error of %d bytes cut to %d", len(res.Error), cut))
		res.Error = res.Error[:cut] + cutSuffix
	}
	if err := validateText("version", res.Version, MaxVersionLength); err != nil {
		notes = append(notes, "version dropped: "+err.Error())
		res.Version = ""
	}
	return res, notes
}
