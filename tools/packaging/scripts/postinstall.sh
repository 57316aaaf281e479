#!/bin/sh
# {{.Name}}: after its files are in place (deb postinst configure [OLD-VERSION], rpm %post 1|2).
# The units are neither enabled nor started: a member or an edge needs its configuration and
# tokens first (/etc/muster). An upgrade restarts the units that were running, as Debian's and
# Fedora's service packages do, so the new binary is the one that runs.
set -e

upgrade=
case "$1" in
configure) [ -z "$2" ] || upgrade=yes ;;
[0-9]*) [ "$1" -lt 2 ] || upgrade=yes ;;
esac

# Only when systemd is the running init: a container or a chroot has no manager to tell.
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	if [ -n "$upgrade" ]; then
		systemctl try-restart {{.Units}} >/dev/null 2>&1 || true
	fi
fi
exit 0
