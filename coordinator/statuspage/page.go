// SPDX-License-Identifier: Apache-2.0

package statuspage

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where the page is mounted; the assets are below it.
const Path = "/status/"

//go:embed assets
var embedded embed.FS

// contentSecurityPolicy lets the page load only its own assets and talk only to its own origin:
// no CDN, no inline script, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// Handler serves the page under Path: GET and HEAD only, with headers that keep it from being
// framed, sniffed or cached stale.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the status page is read-only: "+r.Method+" is not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Path)
		if !ok {
			http.Redirect(w, r, Path, http.StatusMovedPermanently)
			return
		}
		if name == "" {
			name = "index.html"
		}
		if strings.Contains(name, "/") {
			// The assets are one flat directory.
			http.NotFound(w, r)
			return
		}
		http.ServeFileFS(w, r, embedded, "assets/"+name)
	})
}

// Assets returns the embedded files of the page, rooted at their directory.
func Assets() fs.FS {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		return embedded // unreachable: the directory is embedded at build time
	}
	return sub
}
