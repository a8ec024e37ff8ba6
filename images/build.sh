#!/bin/bash
# images/build.sh - a reproducible kernel + initramfs for QEMU boot
# experiments (`make images`), from pinned Debian packages only.
#
#   images/build.sh [OUTDIR]          (default build/images)
#
# Writes OUTDIR/vmlinuz (the bzImage of KERNEL_PKG), OUTDIR/vmlinux (the
# kernel ELF unpacked from it: CONFIG_PVH=y, so QEMU boots it with -kernel
# and skips the in-guest decompression), OUTDIR/initramfs.cpio.gz
# (busybox-static and an /init that prints a few facts and powers off),
# OUTDIR/SHA256SUMS over those three and OUTDIR/PACKAGES (which package
# versions and .deb hashes were used).
#
# The .debs come from `apt-get download` into IMAGES_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/hvrun/images, outside build/ so that
# `make clean` keeps them) and are reused while their sha256 matches what
# apt's lists say. They are unpacked with `dpkg -x`, never installed, so
# the images do not depend on what the host has installed.
#
# Reproducible: every file in the archive gets the mtime SOURCE_DATE_EPOCH
# (default: the mtime of the kernel image inside the .deb, which Debian's
# build clamps to the package's changelog date), uid/gid 0, fixed modes;
# names are sorted, cpio runs with --reproducible (inode and device
# numbers from a counter), gzip with -n (no name, no time). The outputs
# get that mtime too. images/check.sh builds twice and compares.
set -euo pipefail
umask 022

KERNEL_PKG="linux-image-6.1.0-50-amd64"
KERNEL_FILE=boot/vmlinuz-6.1.0-50-amd64
BUSYBOX_PKG="busybox-static"

OUT=${1:-build/images}
CACHE=${IMAGES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hvrun/images}
HERE=$(cd "$(dirname "$0")" && pwd)

die() { echo "images: $*" >&2; exit 1; }

# Prints "FILENAME SHA256" of the candidate .deb of package $1, from apt's
# lists (apt-get download --print-uris reads them, downloads nothing).
deb_of() {
    local line
    line=$(apt-get download --print-uris "$1" 2>/dev/null) || return 1
    [ -n "$line" ] || return 1
    # 'URL' FILENAME SIZE SHA256:HEX
    local url name size hash
    read -r url name size hash <<<"$line"
    [ -n "$url" ] && [ -n "$size" ] && [ "${hash%%:*}" = SHA256 ] || return 1
    printf '%s %s\n' "$name" "${hash#SHA256:}"
}

# The cached .deb of package $1 (path on stdout), downloaded when missing
# or when its sha256 is not the one apt's lists give.
fetch_deb() {
    local pkg=$1 info name sum
    info=$(deb_of "$pkg") || return 1
    read -r name sum <<<"$info"
    if [ -f "$CACHE/$name" ] &&
        [ "$(sha256sum <"$CACHE/$name" | cut -d' ' -f1)" = "$sum" ]; then
        echo "  CACHED  $name" >&2
    else
        echo "  FETCH   $name" >&2
        rm -f "$CACHE/$name"
        (cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2) || return 1
        [ "$(sha256sum <"$CACHE/$name" | cut -d' ' -f1)" = "$sum" ] ||
            die "$name: sha256 is not the one apt's lists give"
    fi
    printf '%s\n' "$CACHE/$name"
}

# fetch_deb, and when that fails (stale or missing lists: the version apt
# knows is gone from the mirror), one apt-get update and a retry.
fetch_deb_updating() {
    fetch_deb "$1" && return 0
    echo "  UPDATE  apt lists (fetching $1 failed)" >&2
    apt-get update -qq >&2 || die "apt-get update failed"
    fetch_deb "$1" || die "apt-get download $1 failed after apt-get update"
}

# The byte offsets (0-based) of the XZ magic FD 37 7A 58 5A 00 in file $1.
xz_offsets() {
    LC_ALL=C grep -obUaP '\xFD7zXZ\x00' "$1" | cut -d: -f1
}

is_x86_64_elf() {
    [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
        LC_ALL=C readelf -h "$1" 2>/dev/null | grep -q 'Machine:.*X86-64'
}

# Whether ELF $1 has the note QEMU's -kernel looks for to boot it through
# the PVH entry: owner "Xen", type XEN_ELFNOTE_PHYS32_ENTRY (18), which
# binutils 2.40 prints as an unknown type.
has_pvh_note() {
    LC_ALL=C readelf -n "$1" |
        grep -Eq '^ *Xen .*(\(0x00000012\)|PHYS32_ENTRY)'
}

# The kernel ELF out of bzImage $1 into $2, as the kernel's
# scripts/extract-vmlinux does: decompress from each XZ magic until the
# result is an x86-64 ELF. xz complains about the data after the stream
# (the rest of the bzImage): its status and message are ignored, the
# result is checked instead.
extract_vmlinux() {
    local off
    for off in $(xz_offsets "$1"); do
        tail -c +$((off + 1)) "$1" | xz -dc >"$2" 2>/dev/null || true
        if is_x86_64_elf "$2"; then
            return 0
        fi
    done
    rm -f "$2"
    die "$1: no XZ stream in it decompresses to an x86-64 ELF"
}

# Fixed mtimes over the tree $1 (symlinks themselves, not their targets;
# the modes are fixed where make_root creates things), then the newc archive of it, names sorted, owner 0:0.
pack_initramfs() {
    local root=$1 dest=$2
    find "$root" -depth -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
    (cd "$root" && find . -mindepth 1 -print0 | LC_ALL=C sort -z |
        cpio -o -H newc --null --reproducible -R 0:0 --quiet) |
        gzip -n -9 >"$dest"
}

main() {
    command -v apt-get >/dev/null || die "apt-get not found (Debian only)"
    for tool in dpkg cpio xz readelf gzip sha256sum; do
        command -v "$tool" >/dev/null ||
            die "$tool not found: run 'make images' (it installs cpio xz-utils binutils)"
    done
    [ "$(id -u)" = 0 ] || die "must run as root (mknod /dev/console)"

    mkdir -p "$CACHE" "$OUT"
    local kdeb bdeb work
    kdeb=$(fetch_deb_updating "$KERNEL_PKG")
    bdeb=$(fetch_deb_updating "$BUSYBOX_PKG")

    work=$OUT/.work
    rm -rf "$work"
    mkdir -p "$work/kernel" "$work/busybox" "$work/root"
    dpkg -x "$kdeb" "$work/kernel"
    dpkg -x "$bdeb" "$work/busybox"
    [ -f "$work/kernel/$KERNEL_FILE" ] || die "$kdeb has no $KERNEL_FILE"
    [ -x "$work/busybox/bin/busybox" ] || die "$bdeb has no bin/busybox"

    if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
        SOURCE_DATE_EPOCH=$(stat -c %Y "$work/kernel/$KERNEL_FILE")
    fi
    export SOURCE_DATE_EPOCH

    echo "  KERNEL  $OUT/vmlinuz, $OUT/vmlinux" >&2
    cp "$work/kernel/$KERNEL_FILE" "$work/vmlinuz"
    extract_vmlinux "$work/vmlinuz" "$work/vmlinux"
    has_pvh_note "$work/vmlinux" ||
        die "vmlinux has no Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY)"

    echo "  INITRD  $OUT/initramfs.cpio.gz" >&2
    make_root "$work/busybox/bin/busybox" "$work/root"
    pack_initramfs "$work/root" "$work/initramfs.cpio.gz"

    local f
    for f in vmlinuz vmlinux initramfs.cpio.gz; do
        chmod 0644 "$work/$f"
        touch -d "@$SOURCE_DATE_EPOCH" "$work/$f"
        mv -f "$work/$f" "$OUT/$f"
    done
    (cd "$OUT" && sha256sum vmlinuz vmlinux initramfs.cpio.gz >SHA256SUMS)
    {
        echo "# package version deb-sha256 (images/build.sh, SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
        for f in "$kdeb" "$bdeb"; do
            printf '%s %s %s\n' "$(dpkg-deb -f "$f" Package)" \
                "$(dpkg-deb -f "$f" Version)" "$(sha256sum <"$f" | cut -d' ' -f1)"
        done
    } >"$OUT/PACKAGES"
    rm -rf "$work"
    cat "$OUT/PACKAGES" "$OUT/SHA256SUMS" >&2
}

# The initramfs tree: busybox with a link per applet, /init, /etc/motd
# (the file the init hashes), /dev/console for the kernel's early console.
make_root() {
    local busybox=$1 root=$2 applet
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,dev,etc,proc,sys,tmp,root}
    install -m 0755 "$busybox" "$root/bin/busybox"
    # --list-full is what this busybox binary has: the same every build.
    for applet in $("$root/bin/busybox" --list-full); do
        [ -e "$root/$applet" ] || [ -L "$root/$applet" ] ||
            ln -s /bin/busybox "$root/$applet"
    done
    install -m 0755 "$HERE/init" "$root/init"
    install -m 0644 "$HERE/motd" "$root/etc/motd"
    mknod -m 0600 "$root/dev/console" c 5 1
    chmod 1777 "$root/tmp"
    chmod 0700 "$root/root"
}

main "$@"
