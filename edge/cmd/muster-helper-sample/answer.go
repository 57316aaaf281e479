// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
)

// answer decides one node: fail, shut down, defer, or configure it.
func (s *settings) answer(req *request) (*response, error) {
	id := req.Identity
	switch {
	case id == "":
		return nil, errors.New("request has no identity")
	case matches(s.failRE, id):
		return nil, fmt.Errorf("%s matches --fail", id)
	case matches(s.shutdownRE, id):
		return &response{Shutdown: true, Msg: id + " matches --shutdown"}, nil
	case matches(s.deferRE, id):
		return &response{Defer: true, Msg: id + " matches --defer"}, nil
	}

	res := &response{
		Upgrade: s.upgrade,
		Configuration: map[string]string{
			"identity":                       id,
			"plugin.choria.server.provision": "false",
			"plugin.choria.use_srv":          "false",
			"plugin.choria.middleware_hosts": s.broker,
			"collectives":                    s.collective,
			"main_collective":                s.collective,
			"loglevel":                       s.logLevel,
		},
	}
	if s.signer == nil || req.CSR == nil {
		return res, nil
	}

	cert, err := s.signer.sign(id, req.CSR.CSR)
	if err != nil {
		return nil, err
	}
	if req.CSR.SSLDir == "" {
		return nil, fmt.Errorf("%s: CSR reply names no ssldir", id)
	}
	// gencsr left private.pem in ssldir; configure writes certificate.pem and ca.pem beside it
	dir := req.CSR.SSLDir
	res.Certificate = cert
	res.CA = s.signer.caPEM
	res.SSLDir = dir
	res.Configuration["plugin.security.provider"] = "file"
	res.Configuration["plugin.security.file.certificate"] = filepath.Join(dir, "certificate.pem")
	res.Configuration["plugin.security.file.key"] = filepath.Join(dir, "private.pem")
	res.Configuration["plugin.security.file.ca"] = filepath.Join(dir, "ca.pem")
	// go-choria's default ssldir is <config dir>/ssl, so its parent is where the node keeps its files
	res.Configuration["logfile"] = filepath.Join(filepath.Dir(dir), "server.log")
	return res, nil
}

func matches(re *regexp.Regexp, id string) bool {
	return re != nil && re.MatchString(id)
}
