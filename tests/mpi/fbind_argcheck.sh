#!/bin/sh
# fbind_argcheck.sh MPIFORT SRCDIR - the mpi module's explicit interfaces turn a wrong
# argument count or type into a compile error; mpif.h keeps implicit interfaces.
fc=$1
src=$2/fbind_argcheck.F90
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0
try() { # expect(ok|error) regex flags...
  expect=$1 re=$2
  shift 2
  out=$("$fc" -fsyntax-only "$@" "$src" 2>&1)
  rc=$?
  if [ "$expect" = ok ] && [ $rc -ne 0 ]; then
    echo "FAIL fbind_argcheck: $* should compile:"; echo "$out"; fail=1
  elif [ "$expect" = error ] && { [ $rc -eq 0 ] || ! printf '%s\n' "$out" | grep -Eq "$re"; }; then
    echo "FAIL fbind_argcheck: $* should fail with /$re/ (rc $rc):"; echo "$out"; fail=1
  fi
}
try ok '' 
try error "Missing actual argument for argument .ierror." -DBAD_COUNT
try error "Type mismatch in argument .count." -DBAD_TYPE
try ok '' -DUSE_MPIF
try ok '' -DUSE_MPIF -DBAD_COUNT
[ $fail -eq 0 ] && echo "PASS fbind_argcheck"
exit $fail
