#!/bin/sh
# {{.Name}}: before its files are removed (deb prerm remove|upgrade|..., rpm %preun 0|1).
# A removal stops the units, whose binary is about to go; an upgrade leaves them running for
# postinstall's restart. Enablement, configuration and state stay.
set -e

case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl stop {{.Units}} >/dev/null 2>&1 || true
	fi
	;;
esac
exit 0
