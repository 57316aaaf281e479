// SPDX-License-Identifier: Apache-2.0

package packaging

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/goreleaser/chglog"
)

// writeGzip writes body gzipped at level 9 with no name and no time in the header, as Debian
// wants every compressed file in /usr/share (lintian checks both).
func writeGzip(path string, body []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return fmt.Errorf("gzip %s: %w", path, err)
	}
	if _, err := zw.Write(body); err != nil {
		return fmt.Errorf("gzip %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("gzip %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// manPage renders section 1 from the binary's own --help texts (the root command's, then each
// subcommand's), so `man muster-edge` says what the binary it ships with says.
func manPage(ctx context.Context, binary string, spec Spec, v Version) ([]byte, error) {
	root, err := help(ctx, binary)
	if err != nil {
		return nil, err
	}
	name := spec.Name
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s 1 %s Muster \"Muster manual\"\n", strings.ToUpper(name), v.Time.UTC().Format("2006-01-02"))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", name, roff(firstLine(root)))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n.I command\n.RI [ flags ]\n", name)
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n", roff(spec.Description))
	b.WriteString(".PP\nThe systemd units, the example configuration in /etc/muster and the documentation in\n")
	fmt.Fprintf(&b, ".I /usr/share/doc/%s\nsay how to run it as a service.\n", name)
	b.WriteString(".SH COMMANDS\n")
	for _, cmd := range subcommands(root) {
		text, err := help(ctx, binary, cmd)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, ".SS %s %s\n.nf\n%s.fi\n", name, cmd, roff(text))
	}
	b.WriteString(".SH FILES\n")
	for _, c := range spec.Configs {
		fmt.Fprintf(&b, ".TP\n.I %s\nexample configuration, kept on upgrade\n", c.Dst)
	}
	fmt.Fprintf(&b, ".SH VERSION\n%s\n", v.Full())
	b.WriteString(".SH SEE ALSO\n.BR systemctl (1),\n.BR journalctl (1)\n")
	return []byte(b.String()), nil
}

// help is the binary's --help text for a subcommand (none: the root command).
func help(ctx context.Context, binary string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append(args, "--help")...)
	// Help must not depend on the packaging machine's MUSTER_* settings.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "LANG=C"}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s --help: %w", filepath.Base(binary), strings.Join(args, " "), err)
	}
	return string(out), nil
}

// subcommands lists cobra's "Available Commands:" of a help text, without help and completion
// (cobra's own, the same in every binary).
func subcommands(help string) []string {
	var out []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			if f := strings.Fields(line); len(f) > 0 && f[0] != "help" && f[0] != "completion" {
				out = append(out, f[0])
			}
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// roff escapes text for a man page: backslashes, and lines that would start a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// changelog writes the one-entry changelog nfpm turns into changelog.Debian.gz and rpm's
// %changelog: a package built from a commit, by the version the package carries.
func changelog(path string, spec Spec, v Version) error {
	note := "Built from commit " + short(v.Revision)
	if v.Revision == "" {
		note = "Built from an unversioned tree"
	}
	if v.Modified {
		note += " with uncommitted changes"
	}
	entries := chglog.ChangeLogEntries{{
		ChangeLogOverridables: chglog.ChangeLogOverridables{
			Deb: &chglog.ChangelogDeb{Urgency: "medium", Distributions: []string{"unstable"}},
		},
		Semver:   v.Full(),
		Date:     v.Time,
		Packager: Maintainer,
		Changes:  chglog.ChangeLogChanges{{Commit: v.Revision, Note: note + "."}},
	}}
	if err := entries.Save(path); err != nil {
		return fmt.Errorf("write changelog of %s: %w", spec.Name, err)
	}
	return nil
}

// short is a commit's first 12 hex digits, which keeps the changelog line within 80 columns.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// renderScript fills a maintainer script template with the package's name and units.
func renderScript(dst, name string, spec Spec) error {
	body, err := scripts.ReadFile("scripts/" + name)
	if err != nil {
		return fmt.Errorf("script %s: %w", name, err)
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(body))
	if err != nil {
		return fmt.Errorf("script %s: %w", name, err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ Name, Units string }{spec.Name, spec.Restart}); err != nil {
		return fmt.Errorf("script %s for %s: %w", name, spec.Name, err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}
