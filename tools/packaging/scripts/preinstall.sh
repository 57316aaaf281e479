#!/bin/sh
# {{.Name}}: before its files are unpacked (deb preinst install|upgrade, rpm %pre 1|2).
# The services run as the system user muster (User= in the units), which must exist before the
# package's files owned by it are unpacked. Both packages run this; it is idempotent and leaves
# a muster user or group that already exists as it is.
set -e

if ! getent group muster >/dev/null; then
	groupadd --system muster
fi
if ! getent passwd muster >/dev/null; then
	useradd --system --gid muster --home-dir /nonexistent --no-create-home \
		--shell /usr/sbin/nologin --comment "Muster provisioner" muster
fi
exit 0
