# Sourced first by launch_test.sh, net_test.sh and mpi_multi.sh. Their `case` branches
# are the one declaration of their cases: `SCRIPT.sh --list` prints the branch labels
# (alternatives a|b each on its own line), which tests/netlayer/CMakeLists.txt makes one
# CTest test each, so no branch goes unrun and no test names a case without a branch.
if [[ ${1:-} == --list ]]; then
  sed -n '/^case \$case_ in$/,/^esac$/s/^\([a-z0-9_|]\{1,\}\)).*/\1/p' "$0" | tr '|' '\n'
  exit 0
fi
