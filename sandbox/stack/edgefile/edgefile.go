// SPDX-License-Identifier: Apache-2.0

// Package edgefile writes the edge configuration that provisions one region of a sandbox lab:
// an ordinary muster-edge configuration file, the format a deployment uses, so the edge needs to
// know nothing of labs (`muster-edge run --config DIR/REGION/edge.yaml`).
package edgefile

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kballard/go-shellquote"
	"gopkg.in/yaml.v3"

	"github.com/seed96588659/muster/sandbox/fleet/lab"
	"github.com/seed96588659/muster/sandbox/internal/atomicfile"
)

const (
	// Name is the file's name in the region's directory of the lab.
	Name = "edge.yaml"
	// SampleHelper is the sample helper's executable, which make build puts next to muster-edge.
	SampleHelper = "muster-helper-sample"
)

// Option adds to the settings of one region.
type Option func(r lab.RegionInfo, s map[string]any) error

// PKI turns on features.pki: the edge asks each node for a CSR and the file's helper signs it
// with the lab's CA, so a real node restarts into a configuration with its certificate (without
// it, a real go-choria node exits after its restart). A lab region without a CA is refused.
func PKI() Option {
	return func(r lab.RegionInfo, s map[string]any) error {
		if r.CA == "" || r.CAKey == "" {
			return fmt.Errorf("features.pki: the lab region has no CA to sign its nodes' CSRs")
		}
		s["features.pki"] = true
		return nil
	}
}

// Settings returns the configuration keys that provision region of the lab info describes with
// nothing else to set up: the region's first client identity, token, broker password and JWT
// signer, the updates repository, and the sample helper at helper, which must exist; opts add to
// them. Region "" picks the lab's only region.
func Settings(info lab.Info, region, helper string, opts ...Option) (map[string]any, error) {
	region, r, err := pick(info, region)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(helper); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the sample helper %s does not exist (build %s with make build, or give its path)", helper, SampleHelper)
	}
	s := map[string]any{
		"region":                       region,
		"state_dir":                    filepath.Join(info.Dir, "edge-state", region),
		"site":                         region,
		"interval":                     "1m",
		"token":                        r.ProvisioningToken,
		"broker_provisioning_password": r.ProvisioningPassword,
		"upgrades_repository":          info.UpdatesRepository,
		"features.jwt":                 true,
		"helper":                       shellquote.Join(helperArgs(helper, info, r)...),
		// The lab lives on loopback; nothing outside the machine scrapes it.
		"monitor_bind": "127.0.0.1",
	}
	switch {
	case len(r.Clients) > 0:
		s["choria_config"] = r.Clients[0].Config
		s["edge_name"] = r.Clients[0].Identity
		s["choria_identity"] = r.Clients[0].Identity
	case r.ClientConfig != "":
		s["choria_config"] = r.ClientConfig
	default:
		return nil, fmt.Errorf("lab %s: region %s has no client configuration", info.Dir, region)
	}
	if r.JWTSignerPublicKeyFile != "" {
		s["jwt_verify_cert"] = r.JWTSignerPublicKeyFile
	} else {
		s["jwt_verify_cert"] = r.JWTSignerPublicKey
	}
	for _, o := range opts {
		if err := o(r, s); err != nil {
			return nil, fmt.Errorf("lab %s: region %s: %w", info.Dir, region, err)
		}
	}
	return s, nil
}

// pick returns the region named, or the only one when region is "".
func pick(info lab.Info, region string) (string, lab.RegionInfo, error) {
	names := make([]string, 0, len(info.Regions))
	for name := range info.Regions {
		names = append(names, name)
	}
	sort.Strings(names)
	switch {
	case len(names) == 0:
		return "", lab.RegionInfo{}, fmt.Errorf("lab %s has no regions", info.Dir)
	case region == "" && len(names) > 1:
		return "", lab.RegionInfo{}, fmt.Errorf("lab %s has regions %s: choose one", info.Dir, strings.Join(names, ", "))
	case region == "":
		region = names[0]
	}
	r, ok := info.Regions[region]
	if !ok {
		return "", lab.RegionInfo{}, fmt.Errorf("lab %s has no region %q (its regions: %s)", info.Dir, region, strings.Join(names, ", "))
	}
	if r.BrokerURL == "" {
		return "", lab.RegionInfo{}, fmt.Errorf("lab %s: region %s has no broker_url", info.Dir, region)
	}
	return region, r, nil
}

// helperArgs points the sample helper at the region's broker, has it answer the lab's upgrade
// version (used only with features.upgrades) and sign CSRs with the lab's throwaway CA (used
// only with features.pki, which real nodes need to restart into a working configuration).
func helperArgs(helper string, info lab.Info, r lab.RegionInfo) []string {
	args := []string{helper, "--broker", r.BrokerURL}
	if info.UpgradeVersion != "" {
		args = append(args, "--upgrade", info.UpgradeVersion)
	}
	if r.CA != "" && r.CAKey != "" {
		args = append(args, "--ca", r.CA, "--ca-key", r.CAKey)
	}
	return args
}

// Encode returns the configuration of region as the YAML file muster-edge reads.
func Encode(info lab.Info, region, helper string, opts ...Option) ([]byte, error) {
	s, err := Settings(info, region, helper, opts...)
	if err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(nest(s))
	if err != nil {
		return nil, fmt.Errorf("encode the edge configuration of region %s: %w", s["region"], err)
	}
	head := fmt.Sprintf("# muster-edge configuration for region %s of the sandbox lab in %s,\n# written by muster-sandbox: muster-edge run --config FILE\n", s["region"], info.Dir)
	return append([]byte(head), body...), nil
}

// nest turns dotted keys into the maps a YAML file holds (features.jwt -> features: {jwt: }).
func nest(flat map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range flat {
		section, sub, ok := strings.Cut(k, ".")
		if !ok {
			out[k] = v
			continue
		}
		m, _ := out[section].(map[string]any)
		if m == nil {
			m = map[string]any{}
			out[section] = m
		}
		m[sub] = v
	}
	return out
}

// Write writes the configuration of region of the running lab l (with opts) to
// DIR/REGION/edge.yaml, readable by its owner alone (it holds the provisioning token and
// password), and returns its path.
func Write(l *lab.Lab, region, helper string, opts ...Option) (string, error) {
	info := l.Info()
	body, err := Encode(info, region, helper, opts...)
	if err != nil {
		return "", err
	}
	region, _, _ = pick(info, region)
	path := filepath.Join(l.Dir(), region, Name)
	if err := atomicfile.Write(path, body, 0o600); err != nil {
		return "", fmt.Errorf("edge configuration of region %s: %w", region, err)
	}
	return path, nil
}
