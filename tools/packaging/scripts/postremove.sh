#!/bin/sh
# {{.Name}}: after its files are removed (deb postrm remove|purge|upgrade|..., rpm %postun 0|1).
# Nothing is deleted, purge included: the muster user may still own files, and the state
# directories hold a coordinator's Raft log and ledger or an edge's journal, which an operator
# removes by hand when the member is gone for good.
set -e

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
