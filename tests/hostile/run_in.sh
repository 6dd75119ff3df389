#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a test binary in a hostile environment (needs root to set it up;
# exits 77 = skipped otherwise):
#   run_in.sh hidepid|hidepid1|subsetpid|pidns|noproc|unprivileged BINARY [ARGS...]
set -u
env_name=$1; shift
[ "$(id -u)" -eq 0 ] || { echo "run_in.sh: not root, skipped"; exit 77; }
command -v unshare >/dev/null && command -v setpriv >/dev/null || { echo "run_in.sh: util-linux missing"; exit 77; }
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
# An anchor directory nobody may write, like /dev/shm's files of other users.
export PROCTIMES_TEST_ENV=$env_name
case "$env_name" in
  hidepid)
    exec unshare -m --propagation private sh -c 'mount -t proc -o hidepid=2 proc /proc && exec "$@"' sh "${as_nobody[@]}" "$@" ;;
  hidepid1)
    # hidepid=1 (noaccess): /proc/<pid> of other users is listed, but opening
    # anything in it fails with EPERM.
    exec unshare -m --propagation private sh -c 'mount -t proc -o hidepid=1 proc /proc && exec "$@"' sh "${as_nobody[@]}" "$@" ;;
  subsetpid)
    # subset=pid: only the pid directories (and self); no /proc/sys, so no boot id.
    exec unshare -m --propagation private sh -c 'mount -t proc -o subset=pid proc /proc && exec "$@"' sh "$@" ;;
  pidns)
    # A new pid namespace that still sees the host's /proc (no --mount-proc):
    # /proc/<n> names the host's process n, not ours.
    unshare -p -f true 2>/dev/null || { echo "run_in.sh: unshare -p not permitted here, skipped"; exit 77; }
    exec unshare -p -f -- "$@" ;;
  noproc)
    # AddressSanitizer's leak checker cannot start without /proc (whatever its
    # options); the plain build runs this environment.
    if [ "${PROCTIMES_SANITIZER:-}" = asan ]; then echo "run_in.sh: no /proc under ASan, skipped"; exit 77; fi
    exec unshare -m --propagation private sh -c 'umount -l /proc && exec "$@"' sh "$@" ;;
  unprivileged)
    exec "${as_nobody[@]}" "$@" ;;
  *) echo "run_in.sh: unknown environment $env_name" >&2; exit 2 ;;
esac
