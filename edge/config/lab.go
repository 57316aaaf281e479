// SPDX-License-Identifier: Apache-2.0

package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kballard/go-shellquote"
	"github.com/spf13/viper"
)

// labInfo is the part of a sandbox lab.json the edge reads. The schema is the sandbox module's
// lab.Info (sandbox/lab/info.go); it is declared here because the edge must not import the sandbox.
type labInfo struct {
	UpdatesRepository string               `json:"updates_repository"`
	UpgradeVersion    string               `json:"upgrade_version"`
	Regions           map[string]labRegion `json:"regions"`
}

// labRegion is the part of the sandbox's lab.RegionInfo the edge reads.
type labRegion struct {
	BrokerURL              string      `json:"broker_url"`
	ClientConfig           string      `json:"client_config"`
	Clients                []labClient `json:"clients"`
	ProvisioningToken      string      `json:"provisioning_token"`
	ProvisioningPassword   string      `json:"provisioning_password"`
	JWTSignerPublicKey     string      `json:"jwt_signer_public_key"`
	JWTSignerPublicKeyFile string      `json:"jwt_signer_public_key_file"`
	CA                     string      `json:"ca"`
	CAKey                  string      `json:"ca_key"`
}

// labClient is the sandbox's lab.ClientInfo: one client identity and its ready configuration.
type labClient struct {
	Identity string `json:"identity"`
	Config   string `json:"config"`
}

// FromLab returns the configuration that provisions region of the sandbox lab described by
// labJSON, with nothing else to set up: region "" picks the lab's only region. The helper is
// the sample helper next to the executable (see WithSampleHelper), which must exist.
func FromLab(labJSON, region string, opts ...Option) (*Config, error) {
	o := newOptions(opts)
	values, err := labValues(labJSON, region, o.sampleHelper)
	if err != nil {
		return nil, err
	}
	v := viper.New()
	for k, val := range defaultValues() {
		v.SetDefault(k, val)
	}
	for k, val := range values {
		v.SetDefault(k, val)
	}
	c, err := parse(v)
	if err != nil {
		return nil, fmt.Errorf("lab %s: %w", labJSON, err)
	}
	c.Lab = labJSON
	helper, _ := values["helper"].(string)
	if err := checkFiles(c, helper, o.sampleHelper); err != nil {
		return nil, fmt.Errorf("lab %s: %w", labJSON, err)
	}
	return c, nil
}

// labValues maps one region of a lab.json to configuration keys, as a file would hold them.
func labValues(labJSON, region, sampleHelper string) (map[string]any, error) {
	b, err := os.ReadFile(labJSON)
	if err != nil {
		return nil, fmt.Errorf("read lab: %w", err)
	}
	var info labInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("parse lab %s: %w", labJSON, err)
	}
	names := make([]string, 0, len(info.Regions))
	for name := range info.Regions {
		names = append(names, name)
	}
	sort.Strings(names)
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("lab %s has no regions", labJSON)
	case region == "" && len(names) > 1:
		return nil, fmt.Errorf("lab %s has regions %s: choose one with --region", labJSON, strings.Join(names, ", "))
	case region == "":
		region = names[0]
	}
	r, ok := info.Regions[region]
	if !ok {
		return nil, fmt.Errorf("lab %s has no region %q (its regions: %s)", labJSON, region, strings.Join(names, ", "))
	}
	if r.BrokerURL == "" {
		return nil, fmt.Errorf("lab %s: region %s has no broker_url", labJSON, region)
	}

	values := map[string]any{
		"region":                       region,
		"state_dir":                    filepath.Join(filepath.Dir(labJSON), "edge-state", region),
		"site":                         region,
		"interval":                     "1m",
		"token":                        r.ProvisioningToken,
		"broker_provisioning_password": r.ProvisioningPassword,
		"upgrades_repository":          info.UpdatesRepository,
		"features.jwt":                 true,
		"helper":                       shellquote.Join(sampleHelperArgs(sampleHelper, info, r)...),
		// The lab lives on loopback; nothing outside the machine scrapes it.
		"monitor_bind": "127.0.0.1",
	}
	switch {
	case len(r.Clients) > 0:
		values["choria_config"] = r.Clients[0].Config
		values["edge_name"] = r.Clients[0].Identity
		values["choria_identity"] = r.Clients[0].Identity
	case r.ClientConfig != "":
		values["choria_config"] = r.ClientConfig
	default:
		return nil, fmt.Errorf("lab %s: region %s has no client configuration", labJSON, region)
	}
	if r.JWTSignerPublicKeyFile != "" {
		values["jwt_verify_cert"] = r.JWTSignerPublicKeyFile
	} else {
		values["jwt_verify_cert"] = r.JWTSignerPublicKey
	}
	return values, nil
}

// sampleHelperArgs points the sample helper at the region's broker, has it answer the lab's
// upgrade version (used only with features.upgrades) and sign CSRs with the lab's throwaway CA
// (used only with features.pki, which real nodes need to restart into a working configuration).
func sampleHelperArgs(sampleHelper string, info labInfo, r labRegion) []string {
	args := []string{sampleHelper, "--broker", r.BrokerURL}
	if info.UpgradeVersion != "" {
		args = append(args, "--upgrade", info.UpgradeVersion)
	}
	if r.CA != "" && r.CAKey != "" {
		args = append(args, "--ca", r.CA, "--ca-key", r.CAKey)
	}
	return args
}
