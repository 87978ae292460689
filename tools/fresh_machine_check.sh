#!/usr/bin/env bash
# The fresh-machine check: runs the README's two commands, exactly as written,
# as root, in a stock Debian bookworm root made here with
# `debootstrap --variant=minbase` (Debian's own python3, no pip, no packages
# of ours), on a clean clone of this repository with ../shared beside it.
# A clone on a machine that already has the packages proves nothing; this does.
#
#   bash tools/fresh_machine_check.sh [--keep]   # --keep: leave the root for a look
#
# The root gets the host's package-manager configuration and nothing else:
# the apt sources (and the keyrings and Acquire settings they need), pip's
# configuration files, the certificate files that pip's configuration and
# environment name, and the PIP_*/SSL_*/REQUESTS_CA_BUNDLE environment.
# Needs root, chroot and debootstrap (installed from apt when missing). Every
# mount and the root itself are removed on exit, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
SHARED=$(cd "$REPO/.." && pwd)/shared
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1

log() { echo "fresh_machine_check: $*"; }
fail() { echo "fresh_machine_check: FAILED: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (it builds a Debian root with debootstrap and chroots into it)"
command -v chroot >/dev/null || fail "no chroot on this machine"
[ -d "$SHARED/models" ] || fail "no $SHARED/models beside the repository"
if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap from apt"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null \
    || fail "could not install debootstrap"
fi

# The first Debian mirror the host's apt sources name for bookworm (deb822
# .sources files or one-line .list files); no host is written in this file.
mirror=$(
  { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
      /^URIs:/ { uri = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") print uri }';
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '
      $1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == "bookworm") print $i }';
  } | head -n 1 || true)
[ -n "$mirror" ] || fail "no bookworm mirror in /etc/apt/sources.list*"

ROOT=$(mktemp -d /var/tmp/tflite-gles-fresh.XXXXXX)
cleanup() {
  local status=$?
  rm -f "$ROOT.debootstrap.log"
  for mount in dev/shm dev/pts dev sys proc; do
    if mountpoint -q "$ROOT/$mount" 2>/dev/null; then umount -R "$ROOT/$mount" || umount -l "$ROOT/$mount" || true; fi
  done
  if [ $KEEP -eq 1 ]; then
    log "root kept at $ROOT (mounts removed)"
  elif ! grep -q " $ROOT/" /proc/mounts; then
    rm -rf --one-file-system "$ROOT"
  else
    echo "fresh_machine_check: a mount under $ROOT is still there; not removing it" >&2
  fi
  exit $status
}
trap cleanup EXIT

SECONDS=0
start=$SECONDS
log "debootstrap --variant=minbase bookworm from the host's mirror"
debootstrap --variant=minbase bookworm "$ROOT" "$mirror" > "$ROOT.debootstrap.log" 2>&1 \
  || { tail -n 30 "$ROOT.debootstrap.log"; rm -f "$ROOT.debootstrap.log"; fail "debootstrap"; }
rm -f "$ROOT.debootstrap.log"
log "debootstrap: $((SECONDS - start)) s"

# --- The host's package-manager configuration ---------------------------------
copy_into_root() {  # copies host files into the same paths in the root
  local path
  for path in "$@"; do
    [ -e "$path" ] || continue
    mkdir -p "$ROOT$(dirname "$path")"
    cp -aL "$path" "$ROOT$path"
  done
}
rm -f "$ROOT/etc/apt/sources.list"
copy_into_root /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
# Keyrings the sources name, and the apt settings that only tune how it
# fetches (no hooks that call the host's programs).
for keyring in $(grep -ho 'signed-by=[^] ]*\|Signed-By: *[^ ]*' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
                 | sed 's/signed-by=//; s/Signed-By: *//'); do
  copy_into_root "$keyring"
done
for conf in /etc/apt/apt.conf.d/*; do
  if grep -q '^Acquire::' "$conf" && ! grep -qi 'invoke' "$conf"; then copy_into_root "$conf"; fi
done
pip_configs=(/etc/pip.conf /etc/xdg/pip/pip.conf "$HOME/.config/pip/pip.conf" "$HOME/.pip/pip.conf")
[ -n "${PIP_CONFIG_FILE:-}" ] && pip_configs+=("$PIP_CONFIG_FILE")
copy_into_root "${pip_configs[@]}"
# Certificate files named by pip's configuration and by the environment. They
# go to their own paths and into the root's local CA folder, so that the
# bundle update of a ca-certificates install inside the root keeps them.
certs=$(cat "${pip_configs[@]}" 2>/dev/null | awk -F= '/^[[:space:]]*(cert|client-cert)[[:space:]]*=/ { gsub(/[[:space:]]/, "", $2); print $2 }' || true)
env_names=$(env | grep -E '^(PIP_[A-Z_]+|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE)=' | cut -d= -f1 || true)
for name in $env_names; do
  value=${!name}
  case "$name" in PIP_CERT|PIP_CLIENT_CERT|SSL_CERT_FILE|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE) certs="$certs $value" ;; esac
  case "$name" in PIP_FIND_LINKS|SSL_CERT_DIR) [ -d "$value" ] && copy_into_root "$value" ;; esac
done
for cert in $certs; do
  [ -f "$cert" ] || continue
  copy_into_root "$cert"
  mkdir -p "$ROOT/usr/local/share/ca-certificates"
  cp -L "$cert" "$ROOT/usr/local/share/ca-certificates/host-$(basename "$cert" .crt).crt"
done
cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true

# --- The repository (a clean clone of HEAD) and ../shared ---------------------
mkdir -p "$ROOT/work"
git clone -q --no-hardlinks "$REPO" "$ROOT/work/tflite-gles"
cp -a "$SHARED" "$ROOT/work/shared"
log "clean clone of $(git -C "$REPO" rev-parse --short HEAD) at /work/tflite-gles, shared/ beside it"

mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
mount --make-rslave "$ROOT/dev"

# The commands run with a clean environment: the basics plus the package
# manager's environment named above.
chroot_env=(env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
            LANG=C.UTF-8 TERM=dumb CI="${CI:-}")
for name in $env_names; do chroot_env+=("$name=${!name}"); done

log "root: python3 is $(chroot "$ROOT" "${chroot_env[@]}" sh -c 'command -v python3 || echo absent'),"\
"pip: $(chroot "$ROOT" "${chroot_env[@]}" sh -c 'python3 -m pip --version >/dev/null 2>&1 && echo present || echo absent')"

results=()
overall=0
run_in_root() {  # the README's command, exactly as written, from the repository root
  local command=$1 begin=$SECONDS status=0
  log "== $command =="
  chroot "$ROOT" "${chroot_env[@]}" bash -c "cd /work/tflite-gles && $command" || status=$?
  results+=("$(printf '%-32s status %d  %5d s' "$command" "$status" $((SECONDS - begin)))")
  [ $status -eq 0 ] || overall=1
}
run_in_root "bash tools/run_main_job.sh"
run_in_root "bash tools/run_tests.sh"

log "summary (debootstrap'd Debian bookworm minbase root, as root):"
for line in "${results[@]}"; do echo "  $line"; done
echo "  total                            $SECONDS s"
[ $overall -eq 0 ] || fail "a README command did not end with status 0"
log "ok"
