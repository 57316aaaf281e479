// SPDX-License-Identifier: Apache-2.0

package packaging

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
	"github.com/goreleaser/nfpm/v2/rpm"
)

// Maintainer is the Maintainer of the deb, the Packager of the rpm and the changelog's author.
const Maintainer = "Seed 96588659 maintainers <maintainers@users.noreply.a-seed-96588659.example>"

// Homepage is the project's repository.
const Homepage = "https://github.com/seed96588659/muster"

// scripts are the maintainer script templates, shared by deb and rpm (each reads its own
// arguments) and by both packages.
//
//go:embed scripts/*.sh
var scripts embed.FS

// debianFiles are Debian's copyright file and the lintian overrides, each with its reasons.
//
//go:embed copyright lintian
var debianFiles embed.FS

// Formats are the package formats Build writes, as nfpm names them.
func Formats() []string { return []string{"deb", "rpm"} }

// Options says where Build reads and writes.
type Options struct {
	Root    string // the repository: deploy/, docs/, LICENSE
	Bin     string // directory holding the binaries (make build's bin/)
	Out     string // directory the packages are written to (dist/)
	Version string // replaces the version read from the binaries' build info when set
}

// Artifact is one package written by Build.
type Artifact struct {
	Name    string // package name
	Format  string // deb or rpm
	Path    string
	Version Version
}

// Build writes a .deb and an .rpm of every package of Specs into opts.Out.
func Build(ctx context.Context, opts Options) ([]Artifact, error) {
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	work, err := os.MkdirTemp("", "muster-package-")
	if err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	defer os.RemoveAll(work)
	var out []Artifact
	for _, spec := range Specs() {
		arts, err := buildSpec(ctx, opts, spec, filepath.Join(work, spec.Name))
		if err != nil {
			return nil, fmt.Errorf("package %s: %w", spec.Name, err)
		}
		out = append(out, arts...)
	}
	return out, nil
}

// buildSpec writes one package in every format, generating its scripts, man page, changelog
// and Debian files in work.
func buildSpec(ctx context.Context, opts Options, spec Spec, work string) ([]Artifact, error) {
	binary := filepath.Join(opts.Bin, spec.Name)
	v, err := ReadVersion(binary, opts.Version)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	gen := generated{
		changelog: filepath.Join(work, "changelog.yml"),
		man:       filepath.Join(work, spec.Name+".1.gz"),
		scripts:   map[string]string{},
		debian:    filepath.Join(work, "debian"),
	}
	for _, s := range []string{"preinstall.sh", "postinstall.sh", "preremove.sh", "postremove.sh"} {
		gen.scripts[s] = filepath.Join(work, s)
		if err := renderScript(gen.scripts[s], s, spec); err != nil {
			return nil, err
		}
	}
	page, err := manPage(ctx, binary, spec, v)
	if err != nil {
		return nil, err
	}
	if err := writeGzip(gen.man, page); err != nil {
		return nil, err
	}
	if err := changelog(gen.changelog, spec, v); err != nil {
		return nil, err
	}
	if err := copyEmbedded(debianFiles, gen.debian); err != nil {
		return nil, err
	}
	var arts []Artifact
	for _, format := range Formats() {
		info := packageInfo(opts, spec, v, format, gen)
		path, err := write(info, format, opts.Out)
		if err != nil {
			return nil, err
		}
		arts = append(arts, Artifact{Name: spec.Name, Format: format, Path: path, Version: v})
	}
	return arts, nil
}

// generated are the files buildSpec made for one package.
type generated struct {
	changelog string            // chglog YAML
	man       string            // gzipped man page
	scripts   map[string]string // template name -> rendered script
	debian    string            // copyright and lintian overrides
}

// UnitDir is where both formats install systemd units: el9's place, and on Debian 12 the same
// directory as /lib/systemd/system (/lib is merged into /usr), which lintian accepts alike.
const UnitDir = "/usr/lib/systemd/system"

// packageInfo is nfpm's description of one package in one format.
func packageInfo(opts Options, spec Spec, v Version, format string, gen generated) *nfpm.Info {
	file := func(src, dst string, mode uint32) *files.Content {
		return &files.Content{Source: src, Destination: dst, Type: files.TypeFile,
			FileInfo: &files.ContentFileInfo{Owner: "root", Group: "root", Mode: fs.FileMode(mode), MTime: v.Time}}
	}
	doc := "/usr/share/doc/" + spec.Name + "/"
	man := file(gen.man, "/usr/share/man/man1/"+spec.Name+".1.gz", 0o644)
	if format == "rpm" {
		man.Type = files.TypeRPMDoc
	}
	contents := files.Contents{file(filepath.Join(opts.Bin, spec.Name), "/usr/bin/"+spec.Name, 0o755), man}
	for _, u := range spec.Units {
		contents = append(contents, file(filepath.Join(opts.Root, u), UnitDir+"/"+filepath.Base(u), 0o644))
	}
	for _, c := range spec.Configs {
		f := file(filepath.Join(opts.Root, c.Src), c.Dst, c.Mode)
		f.Type = files.TypeConfigNoReplace
		contents = append(contents, f)
	}
	for _, d := range spec.Dirs {
		contents = append(contents, &files.Content{Destination: d.Path, Type: files.TypeDir,
			FileInfo: &files.ContentFileInfo{Owner: d.Owner, Group: d.Group, Mode: fs.FileMode(d.Mode) | fs.ModeDir, MTime: v.Time}})
	}
	for _, d := range spec.Docs {
		f := file(filepath.Join(opts.Root, d), doc+filepath.Base(d), 0o644)
		if format == "rpm" {
			f.Type = files.TypeRPMDoc
		}
		contents = append(contents, f)
	}
	info := &nfpm.Info{
		Name:          spec.Name,
		Arch:          v.Arch,
		Platform:      "linux",
		Version:       v.Upstream,
		VersionSchema: "none", // the version is already in deb's and rpm's syntax
		Release:       Release,
		Section:       "admin",
		Priority:      "optional",
		Maintainer:    Maintainer,
		Description:   spec.Summary + "\n" + spec.Description,
		Vendor:        "Muster",
		Homepage:      Homepage,
		License:       "Apache-2.0",
		Changelog:     gen.changelog,
		MTime:         v.Time,
		Overridables: nfpm.Overridables{
			Scripts: nfpm.Scripts{
				PreInstall:  gen.scripts["preinstall.sh"],
				PostInstall: gen.scripts["postinstall.sh"],
				PreRemove:   gen.scripts["preremove.sh"],
				PostRemove:  gen.scripts["postremove.sh"],
			},
		},
	}
	switch format {
	case "deb":
		contents = append(contents,
			file(filepath.Join(gen.debian, "copyright"), doc+"copyright", 0o644),
			file(filepath.Join(gen.debian, "lintian", spec.Name), "/usr/share/lintian/overrides/"+spec.Name, 0o644))
		// preinstall's groupadd and useradd.
		info.Depends = []string{"passwd"}
		info.Deb.Compression = "gzip"
	case "rpm":
		lic := file(filepath.Join(opts.Root, "LICENSE"), "/usr/share/licenses/"+spec.Name+"/LICENSE", 0o644)
		lic.Type = files.TypeRPMLicense
		contents = append(contents, lic)
		info.Description = spec.Description
		info.RPM.Summary = spec.Summary
		info.RPM.Group = "System Environment/Daemons"
		info.RPM.Packager = Maintainer
		info.RPM.Compression = "zstd"
		// A fixed build host: two builds of one commit give the same package.
		info.RPM.BuildHost = "muster-package"
		// preinstall's groupadd and useradd.
		info.Depends = []string{"shadow-utils"}
	}
	info.Contents = contents
	return nfpm.WithDefaults(info)
}

// write packages info in format into dir, under the format's conventional file name.
func write(info *nfpm.Info, format, dir string) (string, error) {
	var p nfpm.PackagerWithExtension
	switch format {
	case "deb":
		p = deb.Default
	case "rpm":
		p = rpm.DefaultRPM
	default:
		return "", fmt.Errorf("unknown package format %q", format)
	}
	path := filepath.Join(dir, p.ConventionalFileName(info))
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", tmp, err)
	}
	err = p.Package(info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", errors.Join(fmt.Errorf("write %s package %s: %w", format, filepath.Base(path), err), os.Remove(tmp))
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("rename %s: %w", tmp, err)
	}
	return path, nil
}

// copyEmbedded writes every file of an embedded tree below dst.
func copyEmbedded(fsys embed.FS, dst string) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		body, err := fsys.ReadFile(path)
		if err != nil {
			return fmt.Errorf("embedded %s: %w", path, err)
		}
		if err := os.WriteFile(target, body, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", target, err)
		}
		return nil
	})
}
