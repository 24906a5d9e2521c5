#!/usr/bin/env bash
# Installs Debian packages a make target found missing: the first argument
# says what they are for, the rest name them (nothing to do without any).
set -euo pipefail
purpose=$1
shift
[ $# -gt 0 ] || exit 0
echo "Installing $* ($purpose)..."
if command -v apt-get >/dev/null 2>&1; then
	SUDO=$([ "$(id -u)" -eq 0 ] || echo sudo)
	# apt's and dpkg's progress go to a log, shown only when the install fails.
	log=$(mktemp)
	if ! { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; } > "$log" 2>&1; then
		cat "$log"
		rm -f "$log"
		echo "Installing $* failed (above)."
		exit 1
	fi
	rm -f "$log"
	echo "Installed $*."
else
	echo "Please install: $*"
	exit 1
fi
