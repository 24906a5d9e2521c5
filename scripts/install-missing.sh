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
	$SUDO apt-get update -qq && $SUDO apt-get install -y -qq "$@" > /dev/null
else
	echo "Please install: $*"
	exit 1
fi
