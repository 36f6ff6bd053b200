#!/bin/sh
# Installs dpu-traceback as a systemd service, the way an administrator
# installs software that is not a Debian package: the binary in /usr/local,
# the unit in /etc/systemd/system (units under /lib/systemd/system belong to
# packages). Safe to run again: files already up to date are left alone,
# and a configuration that exists is never overwritten.
#
# POSIX sh (Debian's dash), no bashisms: it runs on a minimal BlueField image.
set -eu
# Directories created on the way (e.g. /usr/local/bin under --root) get the
# usual 0755, whatever the caller's umask.
umask 022

PROG=install.sh
SERVICE=dpu-traceback.service

BIN_PATH=/usr/local/bin/dpu-traceback
UNIT_PATH=/etc/systemd/system/$SERVICE
DROPIN_DIR=/etc/systemd/system/$SERVICE.d
LOGROTATE_PATH=/etc/logrotate.d/dpu-traceback
CONF_DIR=/etc/dpu-traceback
CONF_PATH=$CONF_DIR/config.yaml
DEFAULTS_PATH=/etc/default/dpu-traceback
LOG_DIR=/var/log/dpu-traceback

usage() {
	cat <<EOF
Usage: $PROG [--root DIR] [BINARY]
       $PROG [--root DIR] --uninstall [--purge]
       $PROG --help

Installs dpu-traceback as a systemd service:
  BINARY (default ./dpu-traceback)  -> $BIN_PATH (0755)
  deploy/dpu-traceback.service      -> $UNIT_PATH (0644)
  deploy/dpu-traceback.logrotate    -> $LOGROTATE_PATH (0644)
  deploy/example-config.yaml        -> $CONF_PATH (0644; dir 0750)
  deploy/default                    -> $DEFAULTS_PATH (0644)
  log directory                        $LOG_DIR (0750)
An existing config.yaml or $DEFAULTS_PATH is never overwritten: the new
version is installed beside it as config.yaml.dist / dpu-traceback.dist.
Running it again changes only what differs. It runs 'systemctl
daemon-reload' when the unit changed, and never enables, starts or
restarts the service: it prints the command to run instead.

Options:
  --root DIR   install under DIR instead of / (no systemctl calls)
  --uninstall  remove the binary, the unit and the logrotate file; keep
               the configuration and the logs (stops and disables the
               service first)
  --purge      with --uninstall: also remove $CONF_DIR,
               $DEFAULTS_PATH, $DROPIN_DIR and $LOG_DIR
  -h, --help   this text

Exit codes: 0 done, 1 failed, 2 usage error.
EOF
}

die() {
	printf '%s: error: %s\n' "$PROG" "$1" >&2
	exit 1
}

usage_error() {
	printf '%s: %s (try --help)\n' "$PROG" "$1" >&2
	exit 2
}

say() {
	printf '%s: %s\n' "$PROG" "$1"
}

# --- Arguments -------------------------------------------------------------

root=
root_given=false
uninstall=false
purge=false
binary=
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	--root)
		[ $# -ge 2 ] || usage_error "--root needs a directory"
		root=$2
		root_given=true
		shift 2
		continue
		;;
	--root=*)
		root=${1#--root=}
		root_given=true
		;;
	--uninstall) uninstall=true ;;
	--purge) purge=true ;;
	--)
		shift
		break
		;;
	-*) usage_error "unknown option $1" ;;
	*)
		[ -z "$binary" ] || usage_error "one BINARY only, got '$binary' and '$1'"
		binary=$1
		;;
	esac
	shift
done
if [ $# -gt 0 ]; then
	if [ -n "$binary" ] || [ $# -gt 1 ]; then
		usage_error "one BINARY only"
	fi
	binary=$1
fi
if $purge && ! $uninstall; then
	usage_error "--purge goes with --uninstall"
fi
if $uninstall && [ -n "$binary" ]; then
	usage_error "--uninstall takes no BINARY"
fi
if $root_given; then
	if [ -z "$root" ] || [ ! -d "$root" ]; then
		usage_error "--root '$root': no such directory"
	fi
	# Absolute, without a trailing slash, so "$root$path" is one clean path.
	root=$(cd -- "$root" && pwd -P)
	[ "$root" != / ] || root=
elif [ "$(id -u)" -ne 0 ]; then
	die "must run as root (or use --root DIR to install into a directory tree)"
fi
[ -n "$binary" ] || binary=./dpu-traceback
# A bare name would make "$binary" --version search $PATH, not this directory.
case $binary in
*/*) ;;
*) binary=./$binary ;;
esac

# systemctl only on the running system (never with --root), and only where
# systemd is PID 1 (a container or chroot has systemctl but no manager).
use_systemctl=false
if ! $root_given && [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	use_systemctl=true
fi

HERE=$(cd -- "$(dirname -- "$0")" && pwd -P)

# --- Helpers ---------------------------------------------------------------

changed=false

# mode_of PATH: the permission bits in octal, e.g. 755.
mode_of() {
	stat -c %a -- "$1"
}

# ensure_mode PATH MODE (e.g. 0750): chmod only when it differs, so a second
# run leaves the inode untouched.
ensure_mode() {
	if [ "$(mode_of "$1")" != "${2#0}" ]; then
		chmod "$2" -- "$1"
		say "set mode $2 on $1"
		changed=true
	fi
}

# ensure_dir PATH MODE: our own directory, created or set to MODE.
ensure_dir() {
	if [ ! -d "$1" ]; then
		mkdir -p -- "$1"
		chmod "$2" -- "$1"
		say "created $1"
		changed=true
	else
		ensure_mode "$1" "$2"
	fi
}

# ensure_parent PATH: a shared directory (/usr/local/bin, /etc/default) is
# created if missing but otherwise left as the system has it.
ensure_parent() {
	parent=$(dirname -- "$1")
	if [ ! -d "$parent" ]; then
		mkdir -p -- "$parent"
		say "created $parent"
		changed=true
	fi
}

# put SRC DEST MODE: DEST gets SRC's content and MODE. Written to a temporary
# file in DEST's directory and renamed over DEST, so a reader (or a running
# binary: cp over it fails with "Text file busy") sees the old or the new
# file, never half of one. Returns 0 if DEST changed, 1 if it was current.
put() {
	if [ -f "$2" ] && cmp -s -- "$1" "$2"; then
		ensure_mode "$2" "$3"
		return 1
	fi
	tmp=$2.new.$$
	if ! cp -- "$1" "$tmp" || ! chmod "$3" -- "$tmp" || ! mv -f -- "$tmp" "$2"; then
		rm -f -- "$tmp"
		die "cannot write $2"
	fi
	changed=true
	return 0
}

# put_config SRC DEST: like put, but an existing DEST is the operator's and
# is kept; SRC then goes to DEST.dist for them to compare and merge.
put_config() {
	if [ ! -e "$2" ]; then
		put "$1" "$2" 0644 || :
		say "installed $2"
	elif cmp -s -- "$1" "$2"; then
		ensure_mode "$2" 0644
	elif put "$1" "$2.dist" 0644; then
		say "kept $2 (yours); the new default is in $2.dist"
	fi
}

systemctl_quiet() {
	systemctl "$@" >/dev/null 2>&1
}

# --- Uninstall -------------------------------------------------------------

remove() { # PATH...
	for path do
		if [ -e "$path" ] || [ -L "$path" ]; then
			rm -rf -- "$path"
			say "removed $path"
		fi
	done
}

if $uninstall; then
	if $use_systemctl; then
		# Stop it before its unit disappears; disabling removes the
		# multi-user.target.wants link.
		systemctl_quiet disable --now "$SERVICE" || :
	fi
	# A link `enable` made, also under --root (where systemctl is not run).
	for link in "$root"/etc/systemd/system/*.wants/"$SERVICE"; do
		if [ -L "$link" ]; then
			remove "$link"
		fi
	done
	remove "$root$BIN_PATH" "$root$UNIT_PATH" "$root$LOGROTATE_PATH"
	if $purge; then
		remove "$root$DROPIN_DIR" "$root$CONF_DIR" "$root$DEFAULTS_PATH" \
			"$root$DEFAULTS_PATH.dist" "$root$LOG_DIR"
	fi
	if $use_systemctl; then
		systemctl daemon-reload
		systemctl_quiet reset-failed "$SERVICE" || :
	fi
	if $purge; then
		say "uninstalled and purged"
	else
		say "uninstalled; kept $root$CONF_DIR, $root$DEFAULTS_PATH and $root$LOG_DIR (--purge removes them)"
	fi
	exit 0
fi

# --- Install ---------------------------------------------------------------

[ -f "$binary" ] || die "no binary at $binary (build it with: deno task compile, then pass dist/dpu-traceback)"
for f in dpu-traceback.service dpu-traceback.logrotate default example-config.yaml; do
	[ -f "$HERE/$f" ] || die "missing $HERE/$f (run the script from its deploy/ directory)"
done
# A binary built for another architecture (an x86-64 build on a BlueField's
# Arm cores) fails here rather than in a restart loop. Under --root the tree
# may be for another machine, so that is only a warning.
if ! "$binary" --version >/dev/null 2>&1; then
	if ! $root_given; then
		die "$binary --version failed: not a dpu-traceback binary for this machine?"
	fi
	printf '%s: warning: %s --version failed (a binary for another machine?)\n' "$PROG" "$binary" >&2
fi

fresh=true
[ -e "$root$UNIT_PATH" ] && fresh=false

ensure_parent "$root$BIN_PATH"
if put "$binary" "$root$BIN_PATH" 0755; then
	say "installed $root$BIN_PATH"
	binary_changed=true
else
	binary_changed=false
fi

ensure_parent "$root$UNIT_PATH"
if put "$HERE/dpu-traceback.service" "$root$UNIT_PATH" 0644; then
	say "installed $root$UNIT_PATH"
	unit_changed=true
else
	unit_changed=false
fi

ensure_parent "$root$LOGROTATE_PATH"
if put "$HERE/dpu-traceback.logrotate" "$root$LOGROTATE_PATH" 0644; then
	say "installed $root$LOGROTATE_PATH"
fi

# 0750 like the unit's ConfigurationDirectoryMode= (systemd would set it at
# start anyway): a web.yml or TLS key kept here is not world-readable.
ensure_dir "$root$CONF_DIR" 0750
put_config "$HERE/example-config.yaml" "$root$CONF_PATH"
ensure_parent "$root$DEFAULTS_PATH"
put_config "$HERE/default" "$root$DEFAULTS_PATH"

# Matches LogsDirectoryMode=0750 in the unit.
ensure_dir "$root$LOG_DIR" 0750

if $unit_changed && $use_systemctl; then
	systemctl daemon-reload
	say "ran systemctl daemon-reload"
fi

$changed || say "nothing to change: already installed"

# What the operator does next; never done for them.
if $fresh; then
	say "next: edit $CONF_PATH (device, monitors, rules) and $DEFAULTS_PATH,"
	say "      check it:  $BIN_PATH check-config $CONF_PATH"
	say "      start it:  systemctl enable --now $SERVICE"
elif $binary_changed || $unit_changed; then
	if ! $use_systemctl; then
		say "next: systemctl restart $SERVICE   (if it runs: to run the new version)"
	elif systemctl_quiet is-active "$SERVICE"; then
		say "next: systemctl restart $SERVICE   (it still runs the old version)"
	fi
fi
exit 0
