#!/bin/sh
# promtool.sh prints the path of a promtool binary, installing one into the repository's bin/ when
# none is at hand, so `make test` can validate deploy/prometheus/*.yaml on a fresh machine.
#
# Order: $PROMTOOL; bin/promtool-* installed by an earlier run; promtool on PATH; Debian's
# prometheus package, unpacked (apt-get download + dpkg-deb -x: nothing is installed system-wide
# and no daemon starts); go install of the pinned version from the Go module proxy.
set -eu

PROMTOOL_GO_VERSION=v0.316.0   # github.com/prometheus/prometheus (Prometheus 3.x)

root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$root/bin"

if [ -n "${PROMTOOL:-}" ] && [ -x "$PROMTOOL" ]; then
	echo "$PROMTOOL"; exit 0
fi
for p in "$bin/promtool-go-$PROMTOOL_GO_VERSION" "$bin/promtool-debian"; do
	if [ -x "$p" ]; then echo "$p"; exit 0; fi
done
if p=$(command -v promtool 2>/dev/null); then
	echo "$p"; exit 0
fi

mkdir -p "$bin"
work=$(mktemp -d "${TMPDIR:-/tmp}/promtool.XXXXXX")
trap 'rm -rf "$work"' EXIT

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then
	echo "promtool.sh: unpacking Debian's prometheus package for promtool" >&2
	if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
		# A fresh machine may have no package lists yet.
		if [ "$(id -u)" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; fi
		(cd "$work" && apt-get download prometheus >/dev/null 2>&1) || true
	fi
	deb=$(ls "$work"/prometheus_*.deb 2>/dev/null | head -n 1 || true)
	if [ -n "$deb" ] && dpkg-deb -x "$deb" "$work/x" && [ -x "$work/x/usr/bin/promtool" ] &&
		"$work/x/usr/bin/promtool" --version >/dev/null 2>&1; then
		cp "$work/x/usr/bin/promtool" "$bin/promtool-debian.tmp"
		mv "$bin/promtool-debian.tmp" "$bin/promtool-debian"
		echo "$bin/promtool-debian"; exit 0
	fi
	echo "promtool.sh: Debian's package did not yield promtool; trying the Go module proxy" >&2
fi

echo "promtool.sh: go install github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_GO_VERSION (minutes)" >&2
GOBIN="$work/gobin" GOFLAGS= GOWORK=off go install "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_GO_VERSION" >&2
mv "$work/gobin/promtool" "$bin/promtool-go-$PROMTOOL_GO_VERSION"
echo "$bin/promtool-go-$PROMTOOL_GO_VERSION"
