#!/bin/sh
# Boot a PC stand-in image (README "Booting under QEMU") on N cores and read
# its verdict: QEMU's isa-debug-exit status 33 is passed (pc::power_off),
# anything else failed; the serial console is shown either way.
#   run_qemu.sh <image.elf> <cores> [seconds, default 240]
set -u
image=$1 cores=$2 limit=${3:-240}
qemu=$(command -v qemu-system-i386) || {
  echo "run_qemu.sh: qemu-system-i386 not found (Debian: apt-get install qemu-system-x86; ./build.sh installs it)" >&2
  exit 1
}
[ -f "$image" ] || { echo "run_qemu.sh: no image $image (build the target)" >&2; exit 1; }
# -cpu qemu32: a 32-bit CPU with a local APIC and a TSC; 64 MB is room for
# the image's 48 stacks and regions. No display, no reboot on a triple fault.
timeout --foreground "$limit" "$qemu" -kernel "$image" -append "cores=$cores" -smp "$cores" -cpu qemu32 -m 64 \
  -display none -serial stdio -monitor none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 </dev/null
status=$?
case $status in
  33) exit 0 ;;
  35) echo "run_qemu.sh: the program reported a failure" >&2 ;;
  124) echo "run_qemu.sh: no verdict within $limit s" >&2 ;;
  *) echo "run_qemu.sh: QEMU ended with status $status, not the program's verdict" >&2 ;;
esac
exit 1
