#!/bin/sh
# CTest scc.chip_build: the chip build's relocatable object may leave
# undefined only the symbols the start-up interface documents
# (platforms/scc/README.md): none, since start.cpp defines tacomesh_scc_start
# and tacomesh_scc_lint_handler and the probe defines tacomesh_scc_main. It
# must define those three. An undefined memcpy, __udivdi3, __stack_chk_fail,
# _GLOBAL_OFFSET_TABLE_ or __cxa_* means the image would need a C library, a
# compiler runtime or a PIC loader that bare metal does not have.
#   check_symbols.sh <nm> <object> [allowed-undefined-symbol...]
set -eu
nm=$1 object=$2
shift 2
[ -f "$object" ] || { echo "no object $object (build the target tacomesh_scc_chip)" >&2; exit 1; }
allowed=" $* "
status=0
for sym in $("$nm" -u "$object" | awk '{print $NF}'); do
  case "$allowed" in
    *" $sym "*) ;;
    *) echo "undefined symbol not in the start-up interface: $sym" >&2; status=1 ;;
  esac
done
for sym in tacomesh_scc_start tacomesh_scc_main tacomesh_scc_lint_handler; do
  "$nm" -g --defined-only "$object" | awk '$2 == "T" {print $3}' | grep -qx "$sym" \
    || { echo "start-up interface symbol not defined: $sym" >&2; status=1; }
done
[ $status -eq 0 ] && echo "ok: $object leaves no undefined symbols beyond: ${*:-(none)}"
exit $status
