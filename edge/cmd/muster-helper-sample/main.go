// SPDX-License-Identifier: Apache-2.0

// Command muster-helper-sample is the site helper Muster ships for the sandbox lab and `make
// run`. By default it reads one helper Request from stdin and writes one Response, as
// choria-provisioner's helpers do; with --persistent it serves the helper package's line
// protocol until stdin ends, echoing each request's id in its answer.
//
// Every node is configured as a normal server on --broker. With --ca and --ca-key it signs the
// node's CSR (the edge's PKI feature) and configures the file security provider on the
// certificate, which a real go-choria node needs to start; without them only nodes that check
// nothing beyond the provision flag (the emulated fleet) accept the configuration.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "muster-helper-sample: %v\n", err)
		os.Exit(1)
	}
}

// settings are the parsed flags.
type settings struct {
	persistent bool
	broker     string
	upgrade    string
	logLevel   string
	collective string
	deferRE    *regexp.Regexp
	shutdownRE *regexp.Regexp
	failRE     *regexp.Regexp
	signer     *signer
}

func parseFlags(args []string) (*settings, error) {
	fs := flag.NewFlagSet("muster-helper-sample", flag.ContinueOnError)
	s := &settings{}
	var deferExpr, shutdownExpr, failExpr, caFile, caKeyFile string
	fs.BoolVar(&s.persistent, "persistent", false, "serve the persistent line protocol until stdin ends")
	fs.StringVar(&s.broker, "broker", "", "middleware hosts of the configured node, e.g. nats://127.0.0.1:4222 (required)")
	fs.StringVar(&s.upgrade, "upgrade", "", "answer upgrade: VERSION for every configured node")
	fs.StringVar(&s.logLevel, "loglevel", "info", "loglevel of the configured node")
	fs.StringVar(&s.collective, "collective", "mcollective", "collective the configured node joins")
	fs.StringVar(&deferExpr, "defer", "", "defer identities matching this regular expression")
	fs.StringVar(&shutdownExpr, "shutdown", "", "shut down identities matching this regular expression")
	fs.StringVar(&failExpr, "fail", "", "fail for identities matching this regular expression (exit 1, or an error line with --persistent)")
	fs.StringVar(&caFile, "ca", "", "PEM CA certificate that signs node CSRs")
	fs.StringVar(&caKeyFile, "ca-key", "", "PEM private key of --ca")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if s.broker == "" {
		return nil, errors.New("--broker is required")
	}
	var err error
	for _, re := range []struct {
		flag, expr string
		into       **regexp.Regexp
	}{{"--defer", deferExpr, &s.deferRE}, {"--shutdown", shutdownExpr, &s.shutdownRE}, {"--fail", failExpr, &s.failRE}} {
		if re.expr == "" {
			continue
		}
		if *re.into, err = regexp.Compile(re.expr); err != nil {
			return nil, fmt.Errorf("%s: %w", re.flag, err)
		}
	}
	if (caFile == "") != (caKeyFile == "") {
		return nil, errors.New("--ca and --ca-key go together")
	}
	if caFile != "" {
		if s.signer, err = loadSigner(caFile, caKeyFile); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func run(args []string, in io.Reader, out io.Writer) error {
	s, err := parseFlags(args)
	if err != nil {
		return err
	}
	if s.persistent {
		return serve(s, in, out)
	}
	req := &request{}
	if err := json.NewDecoder(in).Decode(req); err != nil {
		return fmt.Errorf("decode request: %w", err)
	}
	res, err := s.answer(req)
	if err != nil {
		return err
	}
	return json.NewEncoder(out).Encode(res)
}

// serve answers one request line per answer line, flushing whenever no further request is
// already buffered so that pipelined requests share writes.
func serve(s *settings, in io.Reader, out io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if err := enc.Encode(s.answerLine(line)); err != nil {
				return fmt.Errorf("write answer: %w", err)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return w.Flush()
			}
			return fmt.Errorf("read request: %w", err)
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("write answer: %w", err)
			}
		}
	}
}

// answerLine is the answer to one request line, carrying its id: a Response, or an error line
// that fails only this request.
func (s *settings) answerLine(line []byte) any {
	req := &request{}
	// a field of the wrong type still leaves the id decoded, so the error reaches its request
	if err := json.Unmarshal(line, req); err != nil {
		return errorLine{ID: req.ID, Error: fmt.Sprintf("decode request: %v", err)}
	}
	res, err := s.answer(req)
	if err != nil {
		return errorLine{ID: req.ID, Error: err.Error()}
	}
	res.ID = req.ID
	return res
}
